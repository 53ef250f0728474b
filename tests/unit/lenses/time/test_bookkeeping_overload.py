"""The time lens's early stop sees the overload check the analysis applies: a run never stops
early on an interval the analysis then widens (stats.overload,
lenses.time.interval_basis.interval_basis)."""

from __future__ import annotations

import json
import math
import random

from perflab.lenses.time.analyse import analyse_time
from perflab.lenses.time.artifacts import KIND_SHARED_CPU
from perflab.lenses.time.bookkeeping import may_stop_after, sequences_within_precision
from perflab.lenses.time.interval_basis import interval_basis
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Sample,
    Severity,
)
from perflab.records.settings import Settings
from perflab.stats.preemption import Preemption

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
    basis = interval_basis(baseline, variant, confidence=0.95, policy=Preemption.CORRECT)
    assert basis is not None and basis.overloaded
    # the sequences alone (the rule before the overload check) would stop
    assert sequences_within_precision([basis.mean], PRECISION, equivalence_band=BAND)
    assert not may_stop_after([basis], PRECISION, equivalence_band=BAND)

    analysis = analyse_time(
        Benchmark(name="b", stmt="pass"),
        ["A", "B"],
        BenchmarkData(samples=tuple(baseline + variant)),
        Settings(preempted="correct", equivalence_band=BAND),
    )
    (comparison,) = analysis.comparisons
    # the analysis reads its verdict off the interval the stopping rule looked at
    assert (comparison.ci_low, comparison.ci_high) == (
        basis.estimate.ci_low,
        basis.estimate.ci_high,
    )
    assert comparison.verdict is Verdict.INCONCLUSIVE


def test_even_preemption_that_costs_nothing_more_may_stop_early() -> None:
    baseline, variant = _samples(random.Random(1), (0.3, 0.3), growth=0.0)
    basis = interval_basis(baseline, variant, confidence=0.95, policy=Preemption.CORRECT)
    assert basis is not None and not basis.overloaded
    assert may_stop_after([basis], PRECISION, equivalence_band=BAND)


def test_another_perflab_run_on_the_cpu_is_overload_whatever_the_samples_show() -> None:
    # even preemption that costs nothing more: nothing in the samples, but another run was
    # known to measure on the same CPU
    baseline, variant = _samples(random.Random(1), (0.3, 0.3), growth=0.0)
    basis = interval_basis(
        baseline, variant, confidence=0.95, policy=Preemption.CORRECT, shared_cpu_with=(4242,)
    )
    assert basis is not None and basis.overloaded
    assert basis.check is not None and basis.check.shared_cpu_with == (4242,)
    assert basis.check.to_json()["shared_cpu_with"] == [4242]
    assert not may_stop_after([basis], PRECISION, equivalence_band=BAND)

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
        basis.estimate.ci_low,
        basis.estimate.ci_high,
    )
