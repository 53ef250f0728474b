"""The asm lens on small C functions compiled here, where the answers are known."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from perflab.lenses.asm.code_diff import canonical_name, compare_functions
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from tests.support.asm_builds import listing_of, run_lens

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc"),
]

RELU = """
#include <stddef.h>
float in_buf[1024], out_buf[1024];
__attribute__((noinline)) void relu(float *restrict out, const float *restrict in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = in[i] > 0.f ? in[i] : 0.f;
}
void run(int reps) { for (int r = 0; r < reps; r++) relu(out_buf, in_buf, 1024); }
int atoi(const char *);
int main(int argc, char **argv) { run(argc > 1 ? atoi(argv[1]) : 1); return (int)out_buf[1]; }
"""

HELPER = """
HELPER_ATTR int scale(int x) { return 3 * x + 1; }
int total(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += scale(v[i]);
  return s;
}
"""


def compile_c(tmp_path: Path, name: str, source: str, *flags: str, shared: bool = True) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    out = tmp_path / (f"lib{name}.so" if shared else name)
    kind = ["-shared", "-fPIC"] if shared else []
    subprocess.run(["gcc", *flags, *kind, "-o", str(out), str(src)], check=True)
    return out


@pytest.fixture(scope="module")
def relu_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("relu")
    flags = {
        "sse": ("-O3", "-march=x86-64"),
        "avx2": ("-O3", "-mavx2"),
        "avx512": ("-O3", "-mavx512f", "-mprefer-vector-width=512"),
        "O0": ("-O0",),
    }
    return {name: compile_c(tmp, f"relu_{name}", RELU, *f) for name, f in flags.items()}


@pytest.mark.parametrize(("build", "bits"), [("sse", 128), ("avx2", 256), ("avx512", 512)])
def test_vector_width_follows_the_target(
    relu_builds: dict[str, Path], build: str, bits: int
) -> None:
    listing = listing_of(relu_builds[build], "relu")
    assert listing.vector_width_bits == bits
    assert listing.hot_loop is not None
    assert listing.hot_loop.fits_l1i and listing.hot_loop.fits_uop_cache
    assert listing.mix.vector >= 2 and listing.mix.loads >= 1 and listing.mix.stores >= 1
    if shutil.which("llvm-mca"):
        assert listing.hot_loop.throughput is not None
        assert 0 < listing.hot_loop.throughput.cycles_per_iteration < 20


def test_unoptimised_build_is_scalar_and_larger(relu_builds: dict[str, Path]) -> None:
    fast = listing_of(relu_builds["sse"], "relu")
    slow = listing_of(relu_builds["O0"], "relu")
    assert slow.mix.vector == 0 and slow.mix.scalar_fp > 0
    change = compare_functions("relu", slow, fast)
    assert "code size" in change.sentence
    assert change.rows and change.baseline is not None


def test_avx512_change_is_summarised(relu_builds: dict[str, Path]) -> None:
    change = compare_functions(
        "relu", listing_of(relu_builds["avx2"], "relu"), listing_of(relu_builds["avx512"], "relu")
    )
    assert change.sentence.startswith("uses 512-bit registers (baseline 256)")
    assert "zmm" in "\n".join(row.right.text for row in change.rows if row.right)


def test_inlining_change_shows_as_calls_added(tmp_path: Path) -> None:
    inlined = compile_c(tmp_path, "inl", HELPER, "-O2", "-DHELPER_ATTR=static inline")
    outlined = compile_c(tmp_path, "out", HELPER, "-O2", "-DHELPER_ATTR=__attribute__((noinline))")
    before = listing_of(inlined, "total")
    after = listing_of(outlined, "total")
    assert not before.calls
    assert any(name.startswith("scale") for name in after.calls)
    change = compare_functions("total", before, after)
    assert change.calls_added and not change.calls_removed
    assert "now calls scale" in change.sentence


def test_cxx_names_are_demangled_and_paired(tmp_path: Path) -> None:
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    source = "namespace at { namespace %s { int k(int x) { return x + 1; } } }\n"
    paths = []
    for isa in ("AVX2", "AVX512"):
        src = tmp_path / f"{isa}.cpp"
        src.write_text(source % isa)
        out = tmp_path / f"lib{isa}.so"
        subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
        paths.append(out)
    names = [listing_of(p, "_ZN2at").name for p in paths]
    assert names == ["at::AVX2::k(int)", "at::AVX512::k(int)"]
    assert canonical_name(names[0]) == canonical_name(names[1]) == "at::CPU_CAPABILITY::k(int)"


needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf")
HAS_AVX512 = "avx512f" in Path("/proc/cpuinfo").read_text()


@needs_perf
def test_lens_on_a_statement_finds_the_library_each_variant_loaded(
    relu_builds: dict[str, Path],
) -> None:
    benchmark = Benchmark(
        "relu", stmt="lib.run(20)", setup="import ctypes, os; lib = ctypes.CDLL(os.environ['KLIB'])"
    )
    # the widest build this CPU can execute (some of these VMs have no AVX-512)
    narrow, wide, bits = (
        ("avx2", "avx512", (256, 512)) if HAS_AVX512 else ("sse", "avx2", (128, 256))
    )
    variants = (
        Variant(narrow, env={"KLIB": str(relu_builds[narrow])}),
        Variant(wide, env={"KLIB": str(relu_builds[wide])}),
    )
    settings = Settings(metrics=(Metric.ASM,)).with_options(symbols=("^relu",))
    out = run_lens(Experiment((benchmark,), variants, settings))
    functions = out["functions"]
    assert isinstance(functions, list)
    first = functions[0]
    assert first["name"] == "relu"
    assert first["baseline"]["object"] == str(relu_builds[narrow])
    assert first["variant"]["object"] == str(relu_builds[wide])
    assert (first["baseline"]["vector_width_bits"], first["variant"]["vector_width_bits"]) == bits
    assert first["variant"]["cost_share"] > 0.3  # perf samples were attributed to it
    assert ("zmm" if HAS_AVX512 else "ymm") in first["diff"]
    assert out["ratio"] > 1.0 and out["unit"] == "bytes"
    assert out["verdict"] == "inconclusive"  # larger code, but code size is not speed


@needs_perf
def test_lens_calls_the_same_code_equivalent(relu_builds: dict[str, Path]) -> None:
    benchmark = Benchmark(
        "relu", stmt="lib.run(20)", setup="import ctypes, os; lib = ctypes.CDLL(os.environ['KLIB'])"
    )
    variants = tuple(Variant(name, env={"KLIB": str(relu_builds["avx2"])}) for name in "ab")
    settings = Settings(metrics=(Metric.ASM,)).with_options(symbols=("^relu",))
    out = run_lens(Experiment((benchmark,), variants, settings))
    assert out["ratio"] == 1.0
    assert out["verdict"] == "equivalent"


@needs_perf
def test_lens_on_a_command_finds_hot_functions_by_profiling(
    relu_builds: dict[str, Path], tmp_path: Path
) -> None:
    executables = {
        name: compile_c(tmp_path, f"exe_{name}", RELU, *flags, shared=False)
        for name, flags in (("sse", ("-O3", "-march=x86-64")), ("avx2", ("-O3", "-mavx2")))
    }
    benchmark = Benchmark("relu", cmd="true")
    # ~0.1 s of relu: enough cpu-clock samples to rank it first
    variants = tuple(Variant(name, cmd=f"{path} 400000") for name, path in executables.items())
    out = run_lens(Experiment((benchmark,), variants, Settings(metrics=(Metric.ASM,))))
    functions = out["functions"]
    assert isinstance(functions, list)
    assert (
        functions[0]["name"] == "relu"
    )  # the hot function, paired despite .constprop/.isra clones
    assert functions[0]["baseline"]["vector_width_bits"] == 128
    assert functions[0]["variant"]["vector_width_bits"] == 256


# two loops whose shares swap with SWAP: each variant's hottest function is the other's second
SWAPPED = """
#include <stdlib.h>
__attribute__((noinline)) long first(long n) {
  long s = 0; for (long i = 0; i < n; i++) s += i * 3 + (s >> 7); return s;
}
__attribute__((noinline)) long second(long n) {
  long s = 1; for (long i = 0; i < n; i++) s ^= i * 5 + (s << 1); return s;
}
int main(int argc, char **argv) {
  long more = atol(argv[1]), less = atol(argv[2]);
  long r = getenv("SWAP") ? first(less) + second(more) : first(more) + second(less);
  return (int)(r & 1);
}
"""


@needs_perf
def test_a_function_hot_in_one_variant_only_is_listed_in_both(tmp_path: Path) -> None:
    """Each variant lists what any variant chose and it ran too: with one hot function each,
    `first` (a's) and `second` (b's) are compared in both, not called absent from one."""
    exe = compile_c(tmp_path, "swapped", SWAPPED, "-O1", shared=False)
    command = f"{exe} 120000000 60000000"
    variants = (Variant("a", cmd=command), Variant("b", cmd=command, env={"SWAP": "1"}))
    experiment = Experiment(
        (Benchmark("swapped", cmd="true"),), variants, Settings(metrics=(Metric.ASM,))
    )
    out = run_lens(experiment, hot_functions=1)
    rows = {f["name"]: f for f in out["functions"]}
    assert {"first", "second"} <= set(rows)
    for name in ("first", "second"):
        assert rows[name]["ran"] == {"baseline": True, "variant": True}, rows[name]
        assert rows[name]["change"] == "identical after normalisation"
        assert not rows[name]["calls_removed"] and not rows[name]["calls_added"]
