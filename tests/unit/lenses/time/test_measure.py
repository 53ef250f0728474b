"""The lenses' measuring loops against scripted workers: no processes, no tools."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

import pytest

from perflab.lenses.time.artifacts import WALL_NS
from perflab.lenses.time.measure import TimeLens
from perflab.lenses.time.statements import sampling_to_fit
from perflab.lenses.torch.analyse import KIND_OPS
from perflab.lenses.torch.measure import TorchLens
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.measure.session import LensSession, WorkerWrap
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from tests.conftest import FAST
from tests.scripted_worker import ScriptedWorker

BENCH = Benchmark(name="b", stmt="f()", setup="pass")
VARIANTS = (Variant("A"), Variant("B", env={"FAST": "1"}))


class FakeClock:
    """Each reading advances 10 ms: budgets run out after a known number of steps."""

    def __init__(self) -> None:
        self.now_ns = 0

    def __call__(self) -> int:
        self.now_ns += 10_000_000
        return self.now_ns


def lens_context(runner: FakeRunner, settings: Settings) -> tuple[LensContext, MemorySink]:
    sink = MemorySink()
    experiment = Experiment(benchmarks=(BENCH,), variants=VARIANTS, settings=settings)
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=sink,
        progress=NullProgress(),
        cpu=1,
        default_python="/usr/bin/python3",
    )
    return context, sink


def loop_ns(spec: LaunchSpec) -> float:
    return 800.0 if (spec.env or {}).get("FAST") == "1" else 1000.0


def test_on_a_busy_machine_samples_are_shortened_after_the_first_generation() -> None:
    worker = ScriptedWorker(loop_ns, lost_share=0.3)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    settings = dataclasses.replace(FAST, budget_s=0.3, min_generations=3, sample_target_ms=10.0)
    context, sink = lens_context(runner, settings)
    lens = TimeLens(clock_ns=FakeClock())
    lens.measure(BENCH, context)
    loops = {(s.variant, s.generation): s.loops for s in sink.samples}
    assert loops["A", 1] == loops["A", 2] == round(loops["A", 0] / 5)  # 10 ms -> 2 ms
    # every variant's samples last alike from then on: B runs 800 ns a loop, A 1000
    assert loops["B", 1] == loops["B", 2] == round(loops["A", 1] * 1000 / 800)
    (note,) = [n for n in sink.notes if "shortened" in n.message]
    assert note.message.startswith("100% of the first generation's samples were preempted")
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TIME), context.experiment)
    (comparison,) = analysis.comparisons
    assert comparison.ratio == pytest.approx(0.8)  # the lost time is taken out of both
    assert [n for n in analysis.notes if "other processes took 30%" in n.message]


def test_time_lens_interleaves_fresh_workers_and_finds_the_ratio() -> None:
    worker = ScriptedWorker(loop_ns)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    settings = dataclasses.replace(FAST, budget_s=0.3)
    context, sink = lens_context(runner, settings)
    lens = TimeLens(clock_ns=FakeClock())
    lens.measure(BENCH, context)

    # fresh workers per generation, one per variant, all on the measuring CPU before they
    # measure: started there, or started ahead elsewhere and moved; all closed but the last
    # generation started ahead, when no generation followed (killed unused)
    assert worker.started >= 2 * settings.min_generations and worker.started % 2 == 0
    assert all(p.spec.argv[0] == "/usr/bin/python3" for p in runner.spawned)
    by_pid = {p.pid: p for p in runner.spawned}
    used = {pid for pid, r in worker.requests if r["op"] == "sample"}
    for pid, process in by_pid.items():
        ops_of = [r for p, r in worker.requests if p == pid]
        if pid not in used:
            assert process.spec.cpu is None and process.returncode != 0  # discarded
            continue
        assert process.returncode == 0
        if process.spec.cpu is None:
            assert {"op": "pin", "cpu": 1} in ops_of
            first_sample = next(i for i, r in enumerate(ops_of) if r["op"] == "sample")
            assert ops_of.index({"op": "pin", "cpu": 1}) < first_sample
        else:
            assert process.spec.cpu == 1
    assert len(by_pid) - len(used) <= 2
    if len(os.sched_getaffinity(0)) > 1:  # another CPU to start the next generation on
        assert any(p.spec.cpu is None for p in runner.spawned)
    ops = [r["op"] for _, r in worker.requests]
    # the first generation calibrates each variant; same-speed ones share the baseline's count
    assert ops.count("calibrate") == len(VARIANTS)
    assert len({s.loops for s in sink.samples}) == 1
    measured = [s for s in sink.samples if not s.warmup and s.name == WALL_NS]
    assert {s.variant for s in measured} == {"A", "B"}
    assert {s.generation for s in measured} == set(range(len(used) // 2))

    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TIME), context.experiment)
    (comparison,) = analysis.comparisons
    assert comparison.ratio == pytest.approx(0.8)
    assert comparison.verdict is Verdict.FASTER


def test_time_lens_gives_a_far_slower_variant_its_own_loop_count() -> None:
    def ns_per_loop(spec: LaunchSpec) -> float:
        return 1000.0 if (spec.env or {}).get("FAST") == "1" else 1000.0 * 1000

    runner = FakeRunner().on_spawn("statement_worker", ScriptedWorker(ns_per_loop))
    context, sink = lens_context(runner, dataclasses.replace(FAST, budget_s=0.3))
    lens = TimeLens(clock_ns=FakeClock())
    lens.measure(BENCH, context)
    loops = {s.variant: s.loops for s in sink.samples}
    # each sample lasts about --sample-ms in both: B runs 1000x the loops of A
    assert loops["B"] == 1000 * loops["A"]
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TIME), context.experiment)
    assert analysis.comparisons[0].ratio == pytest.approx(0.001)


def test_time_lens_reports_a_failing_setup_and_leaves_no_worker() -> None:
    worker = ScriptedWorker(loop_ns, fail_setup="Traceback ...\nNameError: f")
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(runner, FAST)
    with pytest.raises(BenchmarkFailedError, match="the setup raised") as error:
        TimeLens(clock_ns=FakeClock()).measure(BENCH, context)
    assert "NameError" in (error.value.detail or "")
    assert runner.spawned and all(p.returncode is not None for p in runner.spawned)


def test_a_worker_that_dies_is_a_benchmark_failure() -> None:
    def spawn(spec: LaunchSpec) -> FakeProcess:
        process = ScriptedWorker(loop_ns)(spec)
        process.exit_on = lambda line: 1 if json.loads(line)["op"] == "calibrate" else None
        process.stderr = "Segmentation fault\n"
        return process

    runner = FakeRunner().on_spawn("statement_worker", spawn)
    context, _ = lens_context(runner, FAST)
    with pytest.raises(BenchmarkFailedError, match="exited with status 1"):
        TimeLens(clock_ns=FakeClock()).measure(BENCH, context)


def torch_profile_reply(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
    loops = int(request["loops"])
    self_us = loops * loop_ns(spec) / 1000
    return {
        "ok": True,
        "loops": loops,
        "wall_ns": loops * 2000,
        "ops": [
            {
                "name": "aten::add",
                "count": loops,
                "self_cpu_time_total_us": self_us,
                "cpu_time_total_us": self_us,
            }
        ],
        "torch_version": "2.13.0+cpu",
        "cpu_capability": "AVX2",
    }


def test_torch_lens_profiles_every_variant_in_every_generation() -> None:
    worker = ScriptedWorker(loop_ns, handlers={"torch_profile": torch_profile_reply})
    runner = FakeRunner().on_spawn("statement_worker", worker)
    settings = dataclasses.replace(FAST, metrics=(Metric.TORCH,), min_generations=3)
    context, sink = lens_context(runner, settings)
    lens = TorchLens(clock_ns=FakeClock())
    lens.measure(BENCH, context)

    assert worker.started == 2 * 3
    tables = [a for a in sink.artifacts if a.kind == KIND_OPS]
    assert {(a.variant, a.generation) for a in tables} == {
        (v, g) for v in ("A", "B") for g in range(3)
    }
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TORCH), context.experiment)
    assert analysis.comparisons
    assert analysis.comparisons[0].ratio == pytest.approx(0.8)


def test_torch_lens_says_when_a_variant_has_no_torch() -> None:
    def no_torch(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"ok": False, "phase": "torch", "error": "ModuleNotFoundError: torch"}

    worker = ScriptedWorker(loop_ns, handlers={"torch_profile": no_torch})
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(runner, dataclasses.replace(FAST, metrics=(Metric.TORCH,)))
    with pytest.raises(BenchmarkFailedError, match="torch cannot be imported"):
        TorchLens(clock_ns=FakeClock()).measure(BENCH, context)


def test_unscripted_processes_fail_the_test() -> None:
    with pytest.raises(AssertionError, match="no script"):
        FakeRunner().spawn(LaunchSpec(argv=("perf", "stat")))
    with pytest.raises(ConfigError):
        TorchLens().preflight(
            Experiment(benchmarks=(Benchmark("c", cmd="true"),), variants=VARIANTS),
            FakeRunner(),
        )


def test_a_session_starts_every_worker_under_its_wrap_and_releases_it_after_closing() -> None:
    worker = ScriptedWorker(loop_ns)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(runner, FAST)
    session = LensSession(BENCH, context, FakeClock(), lens="counters")
    events: list[str] = []

    def wrap(index: int) -> WorkerWrap:
        events.append(f"wrap {index}")
        return WorkerWrap(
            argv_prefix=("perf", "stat", f"-o{index}", "--"),
            pass_fds=(100 + index,),
            after_spawn=lambda: events.append(f"spawned {index}"),
            release=lambda: events.append(f"release {index}"),
        )

    with session.generation(wrap=wrap) as workers:
        assert [w.process.spec.argv[:4] for w in workers] == [
            ("perf", "stat", "-o0", "--"),
            ("perf", "stat", "-o1", "--"),
        ]
        assert not any(e.startswith("release") for e in events)
    assert all(p.returncode == 0 for p in runner.spawned)  # closed, then released
    launched = [int(e.split()[1]) for e in events if e.startswith("wrap")]
    assert sorted(launched) == [0, 1]
    assert events[:4] == [f"{what} {i}" for i in launched for what in ("wrap", "spawned")]
    assert sorted(events[4:]) == ["release 0", "release 1"]


def test_a_session_kills_and_releases_every_wrapped_worker_when_one_cannot_start() -> None:
    def missing(spec: LaunchSpec) -> FakeProcess:
        raise FileNotFoundError(spec.argv[0])

    runner = FakeRunner().on_spawn("^/no/such/tool", missing)
    runner.on_spawn("statement_worker", ScriptedWorker(loop_ns))
    context, _ = lens_context(runner, FAST)
    session = LensSession(BENCH, context, FakeClock())
    wrapped: list[int] = []
    released: list[int] = []

    def wrap(index: int) -> WorkerWrap:
        wrapped.append(index)
        prefix = ("/no/such/tool",) if len(wrapped) == 2 else ()  # the second launch fails
        return WorkerWrap(prefix, release=lambda: released.append(index))

    with pytest.raises(ConfigError):
        with session.generation(wrap=wrap):
            pass
    assert len(runner.spawned) == 1 and runner.spawned[0].returncode is not None  # killed
    assert sorted(released) == [0, 1]


def test_the_time_lens_behind_its_share_samples_its_minimum_generations_shorter() -> None:
    # each worker takes 0.2 s to start (the probe said less): six generations of 0.4 s of
    # start-up and 0.4 s of sampling cannot fit in 3 s; the ones after the first sample their
    # minimum blocks only
    clock = FakeClock()

    def slow_start(spec: LaunchSpec) -> FakeProcess:
        clock.now_ns += 200_000_000
        return ScriptedWorker(loop_ns)(spec)

    runner = FakeRunner().on_spawn("statement_worker", slow_start)
    settings = dataclasses.replace(FAST, budget_s=3.0, min_generations=6, warmup_blocks=1)
    context, sink = lens_context(runner, settings)
    # not pinned: each generation starts its workers when it begins (none started ahead)
    TimeLens(clock_ns=clock).measure(BENCH, dataclasses.replace(context, cpu=None))
    blocks = {}
    for sample in sink.samples:
        blocks[sample.generation] = max(blocks.get(sample.generation, 0), sample.block + 1)
    assert len(blocks) == 6
    assert blocks[0] > 1 + 4  # the first generation sampled as planned
    assert all(blocks[g] == 1 + 4 for g in range(1, 6))  # warm-up and the minimum blocks


def test_sampling_to_fit_keeps_the_plan_when_it_fits() -> None:
    assert sampling_to_fit(0.5, 10.0, 4, 0.2) == 0.5
    assert sampling_to_fit(0.5, 2.0, 4, 0.2) == pytest.approx(0.3)
    assert sampling_to_fit(0.5, 0.4, 4, 0.2) == 0.0
    assert sampling_to_fit(0.5, -1.0, 0, 0.2) == 0.5
