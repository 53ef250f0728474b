"""Isolated on-disk caches (engine/prepare/caches.py): each variant its own fresh directories,
of one name length, removed at the end; a variable a variant sets itself is its own; the
bytecode cache shared where no variant writes bytecode; JIT caches that were filled; a second
native fill for the ISA valgrind shows, and where a JIT may still compile under valgrind; the
variants' native runs started beside the probe, on the CPU it gives them; the native fill itself
(`fill_natively`) over scripted workers, the variants that ran before left out."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

from perflab.engine.prepare.caches import (
    CACHE_VARIABLES,
    IsolatedCaches,
    NativeRuns,
    NativeRunsAhead,
    fill_natively,
    for_valgrind_isa,
    may_compile_under_valgrind,
    writes_no_bytecode,
)
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.host import cpu_flags
from perflab.machine.proc import LaunchSpec
from perflab.records.model import Benchmark, Variant
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


def test_variants_run_natively_ahead_one_after_another_on_the_cpu_beside_the_probe() -> None:
    worker = ScriptedWorker(lambda spec: 1000.0)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    ahead = NativeRunsAhead(runner, "/usr/bin/python3", timeout_s=60.0)
    benchmark = Benchmark("b", stmt="f()", setup="pass")
    start = ahead.beside_probe(benchmark, [Variant("B"), Variant("C", env={"X": "1"})])
    start(1)  # the probe's reference CPU, once the machine's speed is measured there
    # the benchmark takes them once both are done (taken earlier, the second would not start)
    deadline = time.monotonic() + 30.0
    while _quits(worker) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    ran = ahead.taken("b")
    assert sorted(ran) == ["B", "C"] and all(took_s >= 0.0 for took_s in ran.values())
    spawned = [process.spec for process in runner.spawned]
    assert [spec.cpu for spec in spawned] == [1, 1]
    assert (spawned[1].env or {}).get("X") == "1"
    # each worker ran the set-up and the statement once (a sample), then quit
    ops = [request["op"] for _, request in worker.requests]
    assert ops.count("setup") == 2 and _quits(worker) == 2
    assert ahead.taken("b") == {}  # handed over once; the benchmark fills the rest itself
    ahead.stop()


def _quits(worker: ScriptedWorker) -> int:
    return sum(request["op"] == "quit" for _, request in list(worker.requests))


def test_runs_not_started_ahead_are_left_to_the_benchmark() -> None:
    runner = FakeRunner().on_spawn("statement_worker", ScriptedWorker(lambda spec: 1000.0))
    ahead = NativeRunsAhead(runner, "/usr/bin/python3", timeout_s=60.0)
    benchmark = Benchmark("b", stmt="f()", setup="pass")
    ahead.beside_probe(benchmark, [Variant("B")])  # no CPU beside the probe: never started
    assert ahead.taken("b") == {}
    assert runner.spawned == []


def test_a_stop_kills_a_run_ahead_still_in_its_set_up() -> None:
    # a set-up that never answers (torch.compile's minutes): the stop must not wait for it
    spawned: list[FakeProcess] = []

    def hanging(spec: LaunchSpec) -> FakeProcess:
        hello = json.dumps({"hello": "perflab-worker", "protocol": 1})
        spawned.append(FakeProcess(spec, lambda line: (), greeting=(hello,)))
        return spawned[-1]

    runner = FakeRunner().on_spawn("statement_worker", hanging)
    ahead = NativeRunsAhead(runner, "/usr/bin/python3", timeout_s=600.0)
    ahead.beside_probe(Benchmark("b", stmt="f()", setup="pass"), [Variant("B")])(1)
    deadline = time.monotonic() + 30.0
    while not spawned and time.monotonic() < deadline:
        time.sleep(0.01)
    stopping = threading.Thread(target=ahead.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=30.0)
    assert not stopping.is_alive() and spawned[0].returncode == -9


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


def test_variants_that_ran_before_are_not_run_again_and_count_in_the_fill(tmp_path: Path) -> None:
    runner = FakeRunner().on_spawn("statement_worker", _compiles_into_inductor)
    with IsolatedCaches(parent=str(tmp_path)) as caches:
        variants = (Variant("A"), Variant("B"))
        context, _ = lens_context(runner, FAST)
        applied = tuple(caches.applied(v) for v in variants)
        context = replace(context, experiment=replace(context.experiment, variants=applied))
        # A ran in the probe, B beside it: nothing runs now, and what they took is the fill's
        before = NativeRuns(2.0, {"A": 1.0, "B": 2.0})
        fill = fill_natively(BENCH, context, caches, AVX512, isa_apart=True, ran_before=before)
        assert fill is not None and fill.runs == before and not fill.compiled
        assert runner.spawned == []
        # only B ran before: A runs now, alone
        only_b = NativeRuns(2.0, {"B": 2.0})
        fill = fill_natively(BENCH, context, caches, AVX512, isa_apart=True, ran_before=only_b)
        assert fill is not None and set(fill.runs.by_variant) == {"A", "B"}
        assert fill.runs.took_s >= 2.0 and len(runner.spawned) == 1
