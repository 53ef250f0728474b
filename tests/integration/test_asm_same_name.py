"""Two functions of one name in one object: numpy builds each CPU target of a kernel as its own
object file with the same static helpers (`simd_exp_FLOAT` in the X86_V3 and X86_V4 objects of
_multiarray_umath), so the name alone does not say which copy ran. The asm lens lists the copy
the samples fell in, not the first of the name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from perflab.lenses.asm.elf_code import load_elf_object
from perflab.lenses.asm.locate import find_hot
from perflab.lenses.asm.sources import CodeSample, ProfiledRegion
from perflab.machine.proc import SubprocessRunner
from perflab.tool_drivers.demangling import CxxFiltDemangler

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]

NARROW = """
static __attribute__((noinline)) void kernel(float *v, int n) {
  for (int i = 0; i < n; i++) v[i] += 1.f;
}
void narrow(float *v, int n) { kernel(v, n); }
"""
WIDE = """
static __attribute__((noinline)) void kernel(float *v, int n) {
  for (int i = 0; i < n; i++) v[i] *= 3.f;
}
void wide(float *v, int n) { kernel(v, n); }
"""
LOAD_ADDRESS = 0x7F3A5C200000  # page-aligned, as the dynamic loader maps an object


def test_the_copy_the_samples_ran_in_is_listed_not_the_first_of_its_name(tmp_path: Path) -> None:
    for name, source in (("narrow", NARROW), ("wide", WIDE)):
        (tmp_path / f"{name}.c").write_text(source)
    library = tmp_path / "libtwo.so"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library)]
        + [str(tmp_path / "narrow.c"), str(tmp_path / "wide.c")],
        check=True,
    )
    demangler = CxxFiltDemangler(SubprocessRunner())
    copies = load_elf_object(str(library), demangler).find("kernel")
    copies.sort(key=lambda symbol: symbol.address)
    assert len(copies) == 2
    ran = copies[1]  # the later one: the first of the name is the wrong answer
    region = ProfiledRegion(
        samples=(CodeSample(str(library), "kernel", 4, 50.0, LOAD_ADDRESS + ran.address),),
        objects=(str(library),),
    )

    [found] = find_hot(region, demangler, limit=5)

    assert found.symbol.address == ran.address
    assert found.cost == 50.0
    assert region.offsets(str(library), "kernel", found.starts) == {4: 50.0}
