"""The time lens's early stop sees the overload check the analysis applies: a run never stops
early on an interval the analysis then widens (stats.overload, lenses.time.decision.decide)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
from pathlib import Path

import pytest

from perflab.lenses.time.analyse import analyse_time
from perflab.lenses.time.artifacts import KIND_SHARED_CPU
from perflab.lenses.time.decision import decide
from perflab.lenses.time.measure import TimeLens
from perflab.lenses.time.session import may_stop_after, precise_enough
from perflab.machine import cpu_lock
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Experiment,
    Sample,
    Severity,
    Variant,
)
from perflab.records.settings import Settings
from perflab.stats.preemption import Preemption
from tests.conftest import FAST
from tests.scripted_worker import ScriptedWorker

PRECISION = 0.005
BAND = 0.01


def _samples(
    rng: random.Random, preempted: tuple[float, float], growth: float
) -> tuple[list[Sample], list[Sample]]:
    """An A/A of 14 generations of 20 blocks with little noise: each side's samples preempted
    with its own probability, a preempted sample waiting on the run queue and using `growth`
    more CPU time than the statement needs."""
    sides: tuple[list[Sample], list[Sample]] = ([], [])
    for generation in range(14):
        for block in range(20):
            for side, name in enumerate(("A", "B")):
                cpu_ns = 1e6 * math.exp(rng.gauss(0, 0.001))
                hit = rng.random() < preempted[side]
                cpu_ns *= 1 + growth if hit else 1
                wait_ns = 0.3 * cpu_ns if hit else 0.0
                sides[side].append(
                    Sample(
                        benchmark="b",
                        variant=name,
                        metric=Metric.TIME,
                        name="wall_ns",
                        value=cpu_ns + wait_ns,
                        loops=10,
                        generation=generation,
                        block=block,
                        run_queue_ns=int(wait_ns),
                        cpu_ns=int(cpu_ns),
                        involuntary_switches=1 if hit else 0,
                    )
                )
    return sides


def test_no_early_stop_on_a_sequence_the_overload_check_then_widens() -> None:
    # B preempted 40% of the time, A 10%, preempted samples using 2% more CPU: the corrected
    # units' sequence has settled, but the analysis widens the interval to inconclusive
    baseline, variant = _samples(random.Random(1), (0.1, 0.4), growth=0.02)
    decision = decide(baseline, variant, confidence=0.95, policy=Preemption.CORRECT)
    assert decision is not None and decision.overloaded
    assert precise_enough([decision.mean], PRECISION, equivalence_band=BAND)  # the old rule
    assert not may_stop_after([decision], PRECISION, equivalence_band=BAND)

    analysis = analyse_time(
        Benchmark(name="b", stmt="pass"),
        ["A", "B"],
        BenchmarkData(samples=tuple(baseline + variant)),
        Settings(preempted="correct", equivalence_band=BAND),
    )
    (comparison,) = analysis.comparisons
    # the analysis reads its verdict off the interval the stopping rule looked at
    assert (comparison.ci_low, comparison.ci_high) == (
        decision.estimate.ci_low,
        decision.estimate.ci_high,
    )
    assert comparison.verdict is Verdict.INCONCLUSIVE


def test_even_preemption_that_costs_nothing_more_may_stop_early() -> None:
    baseline, variant = _samples(random.Random(1), (0.3, 0.3), growth=0.0)
    decision = decide(baseline, variant, confidence=0.95, policy=Preemption.CORRECT)
    assert decision is not None and not decision.overloaded
    assert may_stop_after([decision], PRECISION, equivalence_band=BAND)


def test_another_perflab_run_on_the_cpu_is_overload_whatever_the_samples_show() -> None:
    # even preemption that costs nothing more: nothing in the samples, but another run was
    # known to measure on the same CPU
    baseline, variant = _samples(random.Random(1), (0.3, 0.3), growth=0.0)
    decision = decide(
        baseline, variant, confidence=0.95, policy=Preemption.CORRECT, shared_cpu_with=(4242,)
    )
    assert decision is not None and decision.overloaded
    assert decision.check is not None and decision.check.shared_cpu_with == (4242,)
    assert decision.check.to_json()["shared_cpu_with"] == [4242]
    assert not may_stop_after([decision], PRECISION, equivalence_band=BAND)

    artifact = Artifact(
        benchmark="b",
        variant="A",
        metric=Metric.TIME,
        kind=KIND_SHARED_CPU,
        content=json.dumps({"cpu": 1, "pids": [4242]}),
    )
    analysis = analyse_time(
        Benchmark(name="b", stmt="pass"),
        ["A", "B"],
        BenchmarkData(samples=tuple(baseline + variant), artifacts=(artifact,)),
        Settings(preempted="correct", equivalence_band=BAND),
    )
    (note,) = [n for n in analysis.notes if "another perflab run" in n.message]
    assert "pid 4242" in note.message and note.severity is Severity.WARNING
    (comparison,) = analysis.comparisons
    assert (comparison.ci_low, comparison.ci_high) == (
        decision.estimate.ci_low,
        decision.estimate.ci_high,
    )


def _measure_on_cpu_1() -> tuple[TimeLens, MemorySink, Benchmark, Experiment]:
    worker = ScriptedWorker(lambda spec: 800.0 if (spec.env or {}).get("FAST") else 1000.0)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    bench = Benchmark(name="b", stmt="f()")
    experiment = Experiment(
        benchmarks=(bench,),
        variants=(Variant("A"), Variant("B", env={"FAST": "1"})),
        settings=dataclasses.replace(FAST, budget_s=0.3),
    )
    sink = MemorySink()
    context = LensContext(experiment, runner, sink, NullProgress(), 1, "/usr/bin/python3")
    lens = TimeLens(clock_ns=_Clock())
    lens.measure(bench, context)
    return lens, sink, bench, experiment


def _counted_as_overload(other_pid: int) -> None:
    lens, sink, bench, experiment = _measure_on_cpu_1()
    (recorded,) = [a for a in sink.artifacts if a.kind == KIND_SHARED_CPU]
    assert json.loads(recorded.content) == {"cpu": 1, "pids": [other_pid]}
    analysis = lens.analyse(bench, ["A", "B"], sink.data_for("b", Metric.TIME), experiment)
    assert [n for n in analysis.notes if f"pid {other_pid}" in n.message]
    (comparison,) = analysis.comparisons
    assert comparison.to_json()["overload"]["shared_cpu_with"] == [other_pid]


def test_the_time_lens_records_the_run_that_holds_its_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that shares its measuring CPU with the run holding it (after waiting for a free
    one) records the holder; the analysis names it and counts it as overload."""
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    held = cpu_lock.try_lock(1)
    assert held is not None and held.fd is not None
    other_pid = 4242  # the lock file says who holds it: another run
    os.pwrite(held.fd, f"{other_pid:<{cpu_lock.PID_WIDTH}}\n".encode(), 0)
    try:
        _counted_as_overload(other_pid)
    finally:
        held.close()


def test_the_time_lens_records_a_run_that_joined_its_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run holding the CPU records a run that joined it, and leaves the join's mark for
    the note the run gives at its end."""
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    held = cpu_lock.try_lock(1)
    assert held is not None
    other_pid = os.getppid()  # a live process: a run still measuring on the CPU
    mark = tmp_path / f"cpu1.joined.{other_pid}"
    mark.touch()
    try:
        _counted_as_overload(other_pid)
    finally:
        held.close()
    assert mark.exists()


class _Clock:
    """Each reading advances 10 ms."""

    def __init__(self) -> None:
        self.now_ns = 0

    def __call__(self) -> int:
        self.now_ns += 10_000_000
        return self.now_ns


def test_a_look_while_measuring_leaves_an_ended_joiners_mark(tmp_path: Path) -> None:
    ended = tmp_path / "cpu1.joined.999999999"  # no such process: a run that has ended
    ended.touch()
    assert cpu_lock.joined(1, 0.0, tmp_path, remove_ended=False) == (999999999,)
    assert ended.exists()
    assert cpu_lock.joined(1, 0.0, tmp_path) == (999999999,)  # the run's end: found, removed
    assert not ended.exists()
