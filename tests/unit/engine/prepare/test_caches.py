"""Isolated on-disk caches (engine/prepare/caches.py): each variant its own fresh directories,
of one name length, removed at the end; a variable a variant sets itself is its own; the
bytecode cache shared where no variant writes bytecode; JIT caches that were filled; a second
native fill for the ISA valgrind shows, and where a JIT may still compile under valgrind; the
native fill itself (`fill_natively`) over scripted workers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from perflab.engine.prepare.caches import (
    CACHE_VARIABLES,
    IsolatedCaches,
    fill_natively,
    for_valgrind_isa,
    may_compile_under_valgrind,
    writes_no_bytecode,
)
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.host import cpu_flags
from perflab.machine.proc import LaunchSpec
from perflab.records.model import Variant
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context, loop_ns
from tests.support.scripted_worker import ScriptedWorker

# the first processor's lines of /proc/cpuinfo, captured (shortened) on an AVX-512 host and on
# an AVX2 one
AVX512_CPUINFO = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512dq avx512bw avx512vl avx512_vnni hypervisor

processor\t: 1
"""
AVX2_CPUINFO = """processor\t: 0
model name\t: AMD EPYC 7R13 Processor
flags\t\t: fpu sse2 avx avx2 fma hypervisor
"""
AVX512 = cpu_flags(AVX512_CPUINFO)
AVX2 = cpu_flags(AVX2_CPUINFO)
INDUCTOR = ("TORCHINDUCTOR_CACHE_DIR",)
NO_ISA: dict[str, str] = {}  # perflab's environment names no ISA


def test_each_variant_gets_its_own_fresh_folders_removed_at_the_end(tmp_path: Path) -> None:
    a, b = Variant("A"), Variant("longer-name")
    with IsolatedCaches(parent=str(tmp_path)) as caches:
        env_a, env_b = caches.environment(a), caches.environment(b)
        assert set(env_a) == set(CACHE_VARIABLES) - (
            {"PYTHONPYCACHEPREFIX"} if writes_no_bytecode(a) else set()
        )
        assert all(Path(p).is_dir() for p in env_a.values())
        assert env_a["TRITON_CACHE_DIR"] != env_b["TRITON_CACHE_DIR"]
        # the environment's size moves the stack: every variant's paths are as long
        assert [len(p) for p in env_a.values()] == [len(env_b[k]) for k in env_a]
        assert caches.applied(a).env == env_a
        (root,) = tmp_path.iterdir()
    assert not root.exists()


def test_a_variable_a_variant_sets_is_its_own() -> None:
    mine = Variant("A", env={"XDG_CACHE_HOME": "/my/cache"})
    with IsolatedCaches() as caches:
        assert "XDG_CACHE_HOME" not in caches.isolated(mine)
        assert caches.applied(mine).env["XDG_CACHE_HOME"] == "/my/cache"


def test_shared_caches_change_no_variant() -> None:
    variant = Variant("A")
    with IsolatedCaches(enabled=False) as caches:
        assert caches.isolated(variant) == () and caches.environment(variant) == {}
        assert caches.applied(variant) is variant


def test_the_bytecode_cache_is_shared_where_no_bytecode_is_written() -> None:
    quiet = Variant("A", env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert writes_no_bytecode(quiet)
    assert "PYTHONPYCACHEPREFIX" not in IsolatedCaches().isolated(quiet)


def test_a_jit_cache_is_filled_when_it_holds_a_file(tmp_path: Path) -> None:
    (tmp_path / "inductor" / "ab").mkdir(parents=True)
    (tmp_path / "triton").mkdir()
    variant = Variant(
        "A",
        env={
            "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
            "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        },
    )
    caches = IsolatedCaches()
    assert caches.filled(variant) == ()
    (tmp_path / "inductor" / "ab" / "kernel.py").write_text("")
    assert caches.filled(variant) == ("TORCHINDUCTOR_CACHE_DIR",)


def test_inductor_code_is_compiled_again_for_avx2_where_valgrind_hides_avx512() -> None:
    variant = Variant("compiled", env={"TORCHINDUCTOR_CACHE_DIR": "/c/inductor", "A": "1"})
    for_isa = for_valgrind_isa(variant, INDUCTOR, AVX512, NO_ISA)
    assert for_isa is not None
    assert for_isa.env == {**variant.env, "ATEN_CPU_CAPABILITY": "avx2"}
    assert variant.env == {"TORCHINDUCTOR_CACHE_DIR": "/c/inductor", "A": "1"}  # measured as is
    assert not may_compile_under_valgrind(variant, INDUCTOR, AVX512, refilled=True, base_env={})


def test_no_second_fill_without_avx512_inductor_code_or_where_the_isa_is_chosen() -> None:
    variant = Variant("compiled")
    assert for_valgrind_isa(variant, INDUCTOR, AVX2, NO_ISA) is None  # valgrind hides nothing
    assert for_valgrind_isa(variant, (), AVX512, NO_ISA) is None  # nothing compiled
    assert for_valgrind_isa(variant, ("NUMBA_CACHE_DIR",), AVX512, NO_ISA) is None
    chosen = Variant("chosen", env={"ATEN_CPU_CAPABILITY": "avx512"})
    assert for_valgrind_isa(chosen, INDUCTOR, AVX512, NO_ISA) is None
    inherited = {"ATEN_CPU_CAPABILITY": "default"}  # perflab's own environment names one
    assert for_valgrind_isa(variant, INDUCTOR, AVX512, inherited) is None


def test_a_jit_may_compile_again_under_valgrind_only_where_it_hides_the_isa_it_was_keyed_on() -> (
    None
):
    plain = Variant("plain")
    assert not may_compile_under_valgrind(plain, INDUCTOR, AVX2, refilled=False, base_env={})
    assert not may_compile_under_valgrind(plain, (), AVX512, refilled=False, base_env={})
    # numba keys on the CPU's features; no variable makes it compile for valgrind's
    numba = ("NUMBA_CACHE_DIR",)
    assert may_compile_under_valgrind(plain, numba, AVX512, refilled=False, base_env={})
    assert not may_compile_under_valgrind(plain, numba, AVX2, refilled=False, base_env={})
    avx512 = Variant("avx512", env={"ATEN_CPU_CAPABILITY": "avx512"})
    assert may_compile_under_valgrind(avx512, INDUCTOR, AVX512, refilled=False, base_env={})
    avx2 = Variant("avx2", env={"ATEN_CPU_CAPABILITY": "avx2"})
    assert not may_compile_under_valgrind(avx2, INDUCTOR, AVX512, refilled=False, base_env={})


def test_valgrind_s_processes_get_an_inductor_cache_of_their_own_where_it_hides_avx512(
    tmp_path: Path,
) -> None:
    plain, chosen = Variant("plain"), Variant("chosen", env={"ATEN_CPU_CAPABILITY": "avx2"})
    mine = Variant("mine", env={"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "mine")})
    with IsolatedCaches(parent=str(tmp_path)) as caches:
        applied = caches.applied(plain)
        native = applied.env["TORCHINDUCTOR_CACHE_DIR"]
        own = caches.for_valgrind(applied, AVX512, NO_ISA)
        valgrinds = own.env["TORCHINDUCTOR_CACHE_DIR"]
        assert valgrinds != native and Path(valgrinds).is_dir()
        assert {k: v for k, v in own.env.items() if k != "TORCHINDUCTOR_CACHE_DIR"} == {
            k: v for k, v in applied.env.items() if k != "TORCHINDUCTOR_CACHE_DIR"
        }
        # the same path length for every variant: the environment's size moves the stack
        other = caches.for_valgrind(caches.applied(Variant("longer-name")), AVX512, NO_ISA)
        assert len(other.env["TORCHINDUCTOR_CACHE_DIR"]) == len(valgrinds)
        assert caches.for_valgrind(applied, AVX2, NO_ISA) is applied
        users = caches.applied(mine)
        assert caches.for_valgrind(users, AVX512, NO_ISA) is users
        kept = caches.applied(chosen)
        assert caches.for_valgrind(kept, AVX512, NO_ISA) is kept
        # the second fill goes into valgrind's cache, with the ISA valgrind shows
        fill = caches.valgrind_fill(applied, INDUCTOR, AVX512, NO_ISA)
        assert fill is not None and fill.env == {**own.env, "ATEN_CPU_CAPABILITY": "avx2"}
        assert caches.valgrind_fill(applied, INDUCTOR, AVX2, NO_ISA) is None
        assert caches.valgrind_fill(caches.applied(mine), INDUCTOR, AVX512, NO_ISA) is None
    assert caches.for_valgrind(applied, AVX512, NO_ISA) is applied  # closed: nothing to give


def _compiles_into_inductor(spec: LaunchSpec) -> FakeProcess:
    """A worker whose statement compiles: variant A (COMPILES=1) writes into its inductor cache."""
    env = spec.env or {}
    if env.get("COMPILES") == "1":
        folder = Path(env["TORCHINDUCTOR_CACHE_DIR"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"kernel-{env.get('ATEN_CPU_CAPABILITY', 'native')}.py").write_text("")
    return ScriptedWorker(loop_ns)(spec)


def test_cold_variants_run_natively_once_and_inductor_code_again_for_valgrinds_isa(
    tmp_path: Path,
) -> None:
    runner = FakeRunner().on_spawn("statement_worker", _compiles_into_inductor)
    with IsolatedCaches(parent=str(tmp_path)) as caches:
        variants = (Variant("A", env={"COMPILES": "1"}), Variant("B"))
        context, _ = lens_context(runner, FAST)
        applied = tuple(caches.applied(v) for v in variants)
        context = replace(context, experiment=replace(context.experiment, variants=applied))
        fill = fill_natively(BENCH, context, caches, AVX512, isa_apart=True)
        assert fill is not None and set(fill.runs.by_variant) == {"A", "B"}
        assert fill.compiled == {"A": INDUCTOR}  # B compiled nothing
        # A ran a second time, with the ISA valgrind shows, into valgrind's own cache
        assert fill.refilled == ("A",) and fill.may_compile_again == ()
        assert len(runner.spawned) == 3
        # A is warm now; B, which compiles nothing, is run again each time it is asked
        again = fill_natively(BENCH, context, caches, AVX512, isa_apart=True)
        assert again is not None and set(again.runs.by_variant) == {"B"} and not again.compiled
