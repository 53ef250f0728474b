"""The time lens's measuring loop against scripted workers: no processes, no tools."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from perflab.lenses.time.artifacts import WALL_NS
from perflab.lenses.time.measure import TimeLens
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric, Verdict
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, VARIANTS, FakeClock, lens_context, loop_ns
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.lenses.time.measure"


def test_on_a_busy_machine_samples_are_shortened_after_the_first_generation() -> None:
    worker = ScriptedWorker(loop_ns, lost_share=0.3)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    settings = dataclasses.replace(FAST, budget_s=0.3, min_generations=3, sample_target_ms=10.0)
    context, sink = lens_context(runner, settings, FakeClock())
    lens = TimeLens()
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
    context, sink = lens_context(runner, settings, FakeClock())
    lens = TimeLens()
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
    context, sink = lens_context(runner, dataclasses.replace(FAST, budget_s=0.3), FakeClock())
    lens = TimeLens()
    lens.measure(BENCH, context)
    loops = {s.variant: s.loops for s in sink.samples}
    # each sample lasts about --sample-ms in both: B runs 1000x the loops of A
    assert loops["B"] == 1000 * loops["A"]
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TIME), context.experiment)
    assert analysis.comparisons[0].ratio == pytest.approx(0.001)


def test_time_lens_reports_a_failing_setup_and_leaves_no_worker() -> None:
    worker = ScriptedWorker(loop_ns, fail_setup="Traceback ...\nNameError: f")
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(runner, FAST, FakeClock())
    with pytest.raises(BenchmarkFailedError, match="the setup raised") as error:
        TimeLens().measure(BENCH, context)
    assert "NameError" in (error.value.detail or "")
    assert runner.spawned and all(p.returncode is not None for p in runner.spawned)


def test_a_worker_that_dies_is_a_benchmark_failure() -> None:
    def spawn(spec: LaunchSpec) -> FakeProcess:
        process = ScriptedWorker(loop_ns)(spec)
        process.exit_on = lambda line: 1 if json.loads(line)["op"] == "calibrate" else None
        process.stderr = "Segmentation fault\n"
        return process

    runner = FakeRunner().on_spawn("statement_worker", spawn)
    context, _ = lens_context(runner, FAST, FakeClock())
    with pytest.raises(BenchmarkFailedError, match="exited with status 1"):
        TimeLens().measure(BENCH, context)


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
    context, sink = lens_context(runner, settings, clock)
    # not pinned: each generation starts its workers when it begins (none started ahead)
    TimeLens().measure(BENCH, dataclasses.replace(context, cpu=None))
    blocks = {}
    for sample in sink.samples:
        blocks[sample.generation] = max(blocks.get(sample.generation, 0), sample.block + 1)
    assert len(blocks) == 6
    assert blocks[0] > 1 + 4  # the first generation sampled as planned
    assert all(blocks[g] == 1 + 4 for g in range(1, 6))  # warm-up and the minimum blocks
