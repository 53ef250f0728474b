"""The asm lens's claims on C programs compiled here, whose answers nm/objdump/DWARF give:
inlined helpers, renamed callees, split-off .cold parts, glibc's run-time dispatch, loops from
the control-flow graph, and an A/A of each that must make no claim at all."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from perflab.lenses.asm.elf_code import load_elf_object
from perflab.lenses.asm.loops import find_loops, hot_loop
from perflab.lenses.asm.machine_code import FunctionCode, build_listing
from perflab.machine.proc import SubprocessRunner
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.tool_drivers.debuginfo import build_id
from perflab.tool_drivers.demangling import CxxFiltDemangler
from tests.support.asm_builds import listing_of, run_lens

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]
needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf")

HELPER = """
#include <stdlib.h>
HELPER int scale(int x) {
  int y = x * 3 + 1; y ^= y >> 3; y *= 7; y ^= y >> 5; return y + (x & 15);
}
__attribute__((noinline)) int total(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += scale(v[i]);
  return s;
}
static int v[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20000, s = 0;
  for (int i = 0; i < 4096; i++) v[i] = i * 7;
  for (int r = 0; r < reps; r++) { s += total(v, 4096); v[r & 4095] = s; }
  return s == 42;
}
"""
NOINLINE = "-DHELPER=__attribute__((noinline))"
INLINE = "-DHELPER=static inline __attribute__((always_inline))"

SLOW_PATH = """
#include <stdio.h>
#include <stdlib.h>
__attribute__((cold, noinline)) void report(int v, int i) { fprintf(stderr, "bad %d %d\\n", v, i); }
__attribute__((noinline)) int work(const int *a, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] < 0) { report(a[i], i); s -= a[i] * 5 + i; continue; }
    s += a[i] * 3 + (s >> 7);
  }
  return s;
}
static int a[4096];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20000; long t = 0;
  for (int r = 0; r < reps; r++) { t += work(a, 4096); a[r & 4095] = r & 255; }
  return t == 42;
}
"""

MEMCPY = """
#include <string.h>
#include <stdlib.h>
static char src[1 << 16], dst[1 << 16];
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20000;
  for (int r = 0; r < reps; r++) {
    memcpy(dst, src + (r & 63), sizeof dst - 64);
    src[r & 1023] = dst[r & 511];
  }
  return dst[5] == 42;
}
"""

# `.L2 ... ret ... .L3: call puts; jmp .L2`: a backward jump to a block that returns
COLD_JUMP_BACK = """
.intel_syntax noprefix
.text
.globl f
.type f, @function
f:
  test edi, edi
  jne .L3
.L2:
  mov eax, 1
  ret
.L3:
  push rbx
  lea rdi, [rip + message]
  call puts@PLT
  pop rbx
  jmp .L2
.size f, .-f
.section .rodata
message: .string "cold"
"""

MATMUL = """
void mm(float *restrict c, const float *restrict a, const float *restrict b, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.f;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}
"""


def build(tmp: Path, name: str, source: str, *flags: str) -> Path:
    (tmp / f"{name}.c").write_text(source)
    subprocess.run(["gcc", *flags, "-o", name, f"{name}.c"], cwd=tmp, check=True)
    return tmp / name


def lens_on(variants: Sequence[Variant], symbols: Sequence[str] = ()) -> dict[str, Any]:
    settings = Settings(metrics=(Metric.ASM,)).with_options(symbols=tuple(symbols))
    return run_lens(Experiment((Benchmark("b", cmd="true"),), tuple(variants), settings))


def claims(out: dict[str, Any]) -> set[tuple[str, str]]:
    return {(d["claim"], d["function"]) for d in out["diagnoses"]}


# -- loops from the control-flow graph (no profiling) ----------------------------------------


def test_a_jump_back_into_a_block_that_returns_is_not_a_loop(tmp_path: Path) -> None:
    (tmp_path / "f.s").write_text(COLD_JUMP_BACK)
    subprocess.run(["gcc", "-shared", "-o", "libf.so", "f.s"], cwd=tmp_path, check=True)
    listing = listing_of(tmp_path / "libf.so", "f")
    assert any(line.instruction.mnemonic == "jmp" for line in listing.lines)
    assert listing.hot_loop is None


def test_the_hot_loop_of_identical_code_does_not_move_with_a_stray_sample(tmp_path: Path) -> None:
    (tmp_path / "mm.c").write_text(MATMUL)
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", "libmm.so", "mm.c"], cwd=tmp_path, check=True
    )
    runner = SubprocessRunner()
    obj = load_elf_object(str(tmp_path / "libmm.so"), CxxFiltDemangler(runner))
    [symbol] = obj.find("mm")
    plain = listing_of(tmp_path / "libmm.so", "mm")
    loops = find_loops(plain.lines)
    assert len(loops) >= 3  # i, j, k: nested, not three overlapping address ranges
    inner = min(loops, key=lambda loop: loop.instructions)
    outer = max(loops, key=lambda loop: loop.instructions)
    assert outer.encloses(inner)
    stray = next(
        a
        for a in sorted(outer.body)
        if not any(other.contains(a) for other in loops if other != outer)
    )
    chosen = []
    for costs in ({min(inner.body): 500.0}, {min(inner.body): 500.0, stray: 1.0}):
        listing = build_listing(
            FunctionCode("mm", "mm", obj.path, symbol.address, code=obj.read_code(symbol)),
            obj.name_for,
            costs=costs,
        )
        found = hot_loop(find_loops(listing.lines), listing.lines)
        assert found is not None
        chosen.append((found.start, found.size_bytes))
    assert chosen[0] == chosen[1] == (inner.start, inner.size_bytes)


# -- claims from profiles of real programs ---------------------------------------------------


@needs_perf
def test_an_inlined_helper_is_claimed_from_dwarf_and_nothing_else(tmp_path: Path) -> None:
    no = build(tmp_path, "inl_no", HELPER, "-O2", "-g", "-fno-tree-vectorize", NOINLINE)
    yes = build(tmp_path, "inl_yes", HELPER, "-O2", "-g", "-fno-tree-vectorize", INLINE)
    out = lens_on([Variant("noinline", cmd=f"{no} 20000"), Variant("inline", cmd=f"{yes} 20000")])
    assert claims(out) == {("inlined", "scale")}
    [d] = out["diagnoses"]
    assert d["evidence"][0].startswith("DWARF: scale inlined into total at ")
    assert d["samples"] >= 10
    rows = {row["name"]: row for row in out["functions"]}
    assert rows["scale"]["variant"] is None and rows["scale"]["ran"]["variant"] is False
    assert "scale" in rows["total"]["calls_removed"]
    assert "inlined?" not in str(out) and "outlined?" not in str(out)
    back = lens_on([Variant("inline", cmd=f"{yes} 20000"), Variant("noinline", cmd=f"{no} 20000")])
    assert claims(back) == {("outlined", "scale")}


@needs_perf
def test_a_and_a_makes_no_claims_same_binary_or_rebuilt(tmp_path: Path) -> None:
    one = build(tmp_path, "one", HELPER, "-O2", "-g", NOINLINE)
    two = build(tmp_path, "two", HELPER, "-O2", "-g", NOINLINE)
    same = lens_on([Variant("a", cmd=f"{one} 20000"), Variant("b", cmd=f"{one} 20000")])
    assert same["diagnoses"] == [] and same["verdict"] == "equivalent"
    rebuilt = lens_on([Variant("a", cmd=f"{one} 20000"), Variant("b", cmd=f"{two} 20000")])
    assert rebuilt["diagnoses"] == []
    assert rebuilt["functions"][0]["name"] in ("scale", "total")


@needs_perf
def test_a_renamed_callee_is_callee_changed(tmp_path: Path) -> None:
    old = build(tmp_path, "old", HELPER.replace("scale", "mix_old"), "-O2", "-g", NOINLINE)
    new = build(tmp_path, "new", HELPER.replace("scale", "mix_new"), "-O2", "-g", NOINLINE)
    out = lens_on([Variant("old", cmd=f"{old} 20000"), Variant("new", cmd=f"{new} 20000")])
    assert claims(out) == {("callee_changed", "total")}
    [d] = out["diagnoses"]
    assert (d["detail"]["from"], d["detail"]["to"]) == ("mix_old", "mix_new")
    # the claim carries the samples its call sites took: the loop's call ran on both sides
    assert d["detail"]["ran_samples"]["baseline"] > 0 and d["detail"]["ran_samples"]["variant"] > 0
    first = out["functions"][0]  # what each variant spent most time in, paired by call site
    assert (first["baseline"]["symbol"], first["variant"]["symbol"]) == ("mix_old", "mix_new")


@needs_perf
def test_a_cold_part_belongs_to_its_function(tmp_path: Path) -> None:
    split = build(tmp_path, "split", SLOW_PATH, "-O2", "-g")
    if "work.cold" not in subprocess.run(["nm", split], capture_output=True, text=True).stdout:
        pytest.skip("this gcc did not split work.cold off")
    out = lens_on([Variant("a", cmd=f"{split} 20000"), Variant("b", cmd=f"{split} 20000")])
    names = [row["name"] for row in out["functions"]]
    assert names[0] == "work" and not any(".cold" in name for name in names)
    side = out["functions"][0]["baseline"]
    assert [part["symbol"] for part in side["parts"]] == ["work.cold"]
    assert side["size_bytes"] == side["own_size_bytes"] + side["parts"][0]["size_bytes"]
    assert out["diagnoses"] == []


LIBC = Path("/lib/x86_64-linux-gnu/libc.so.6")


def _libc_debug_file() -> bool:
    if not LIBC.exists():
        return False
    found = build_id(str(LIBC))
    return (
        found is not None
        and (Path("/usr/lib/debug/.build-id") / found[:2] / f"{found[2:]}.debug").exists()
    )


@needs_perf
@pytest.mark.skipif(not _libc_debug_file(), reason="needs libc's separate debug file (libc6-dbg)")
def test_glibc_picking_another_memmove_is_a_dispatch_change(tmp_path: Path) -> None:
    obj = load_elf_object(str(LIBC), CxxFiltDemangler(SubprocessRunner()))
    assert obj.symbols_from is not None and obj.symbols_from.endswith(".debug")
    exe = build(tmp_path, "mc", MEMCPY, "-O2")
    tunables = "glibc.cpu.hwcaps=-AVX_Fast_Unaligned_Load,-AVX2_Usable,-ERMS,-AVX512F_Usable"
    variants = [
        Variant("default", cmd=f"{exe} 20000"),
        Variant("sse", cmd=f"{exe} 20000", env={"GLIBC_TUNABLES": tunables}),
    ]
    out = lens_on(variants)
    row = out["functions"][0]
    assert row["name"] == "memmove"  # named as perf report names it, from the debug file
    if row["baseline"]["symbol"] == row["variant"]["symbol"]:
        pytest.skip("this CPU runs the same memmove either way")
    assert ("dispatch_changed", "memmove") in claims(out)
    assert {c for c, _ in claims(out)} <= {"dispatch_changed", "vector_width_changed"}
    same = lens_on([variants[0], Variant("again", cmd=f"{exe} 20000")])
    assert same["diagnoses"] == []
