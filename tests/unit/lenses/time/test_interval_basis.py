"""The interval a time comparison's verdict is read off (lenses.time.interval_basis): which
estimator, over which pairs, and when there is nothing to decide. The overload check's effect on
the early stop is in test_bookkeeping_overload.py."""

from __future__ import annotations

import math

import pytest

from perflab.lenses.time.interval_basis import interval_basis
from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.paired import SampleGroups, estimate_ratio
from perflab.stats.preemption import Preemption
from perflab.stats.trimmed import MIN_UNITS_TO_TRIM, trimmed_ratio

SUBJECT = "perflab.lenses.time.interval_basis"


def sample(
    variant: str,
    value: float,
    generation: int,
    block: int = 0,
    *,
    warmup: bool = False,
    run_queue_ns: int | None = None,
) -> Sample:
    return Sample(
        "b",
        variant,
        Metric.TIME,
        "wall_ns",
        value,
        generation=generation,
        block=block,
        warmup=warmup,
        run_queue_ns=run_queue_ns,
        cpu_ns=None if run_queue_ns is None else int(value) - run_queue_ns,
    )


def sides(ratios: list[float]) -> tuple[list[Sample], list[Sample]]:
    """A baseline of 100 ns a sample and a variant at each ratio, one pair to a generation and
    block (a command's runs are each a generation and a block)."""
    baseline = [sample("A", 100.0, g, g) for g in range(len(ratios))]
    variant = [sample("B", 100.0 * r, g, g) for g, r in enumerate(ratios)]
    return baseline, variant


def test_nothing_measured_decides_nothing() -> None:
    assert interval_basis([], [], confidence=0.95, policy=Preemption.KEEP) is None
    warm = [sample("A", 100.0, 0, warmup=True)], [sample("B", 100.0, 0, warmup=True)]
    assert interval_basis(*warm, confidence=0.95, policy=Preemption.KEEP) is None


def test_statements_read_the_verdict_off_the_units_mean() -> None:
    baseline, variant = sides([1.10, 1.12, 1.08, 1.11, 1.09])
    decision = interval_basis(baseline, variant, confidence=0.95, policy=Preemption.KEEP)
    assert decision is not None
    assert decision.estimate == decision.mean
    geometric_mean = math.exp(sum(map(math.log, [1.10, 1.12, 1.08, 1.11, 1.09])) / 5)
    assert decision.estimate.ratio == pytest.approx(geometric_mean)
    assert decision.estimate.n_groups == 5
    assert len(decision.pairs) == 5


def test_commands_read_it_off_the_trimmed_mean_robust_to_a_spoiled_unit() -> None:
    ratios = [1.0] * (MIN_UNITS_TO_TRIM + 2) + [3.0]  # one batch a slow CPU spoiled
    baseline, variant = sides(ratios)
    decision = interval_basis(
        baseline,
        variant,
        confidence=0.95,
        policy=Preemption.KEEP,
        groups=SampleGroups(batch_blocks=1),
    )
    assert decision is not None
    assert decision.estimate == trimmed_ratio(decision.pairs, 0.95)
    assert decision.estimate.ratio == pytest.approx(1.0)
    assert decision.mean.ratio > 1.05  # the plain mean pays for the spoiled batch


def test_units_average_their_groups_in_the_mean() -> None:
    baseline, variant = sides([1.0, 1.2, 1.1])
    units = {0: 0, 1: 0, 2: 1}
    decision = interval_basis(
        baseline,
        variant,
        confidence=0.95,
        policy=Preemption.KEEP,
        groups=SampleGroups(units=units),
    )
    assert decision is not None
    assert decision.mean == estimate_ratio(decision.pairs, 0.95, units)
    assert decision.mean.n_groups == 2


def test_without_scheduler_accounting_there_is_no_overload_check() -> None:
    decision = interval_basis(*sides([1.0, 1.0, 1.0]), confidence=0.95, policy=Preemption.KEEP)
    assert decision is not None
    assert decision.check is None and not decision.overloaded


def test_excluding_every_pair_leaves_an_undecided_comparison_not_none() -> None:
    # every sample lost half its wall time to other processes: EXCLUDE drops every pair
    baseline = [sample("A", 100.0, g, run_queue_ns=50) for g in range(3)]
    variant = [sample("B", 100.0, g, run_queue_ns=50) for g in range(3)]
    decision = interval_basis(baseline, variant, confidence=0.95, policy=Preemption.EXCLUDE)
    assert decision is not None
    assert decision.pairs == []
    assert math.isnan(decision.estimate.ratio)
    assert decision.estimate.ci_low == 0.0 and math.isinf(decision.estimate.ci_high)
    kept = interval_basis(baseline, variant, confidence=0.95, policy=Preemption.KEEP)
    assert kept is not None and len(kept.pairs) == 3
