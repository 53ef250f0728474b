"""The time table's columns and its ratio come from the same samples by the same estimator, so
baseline x ratio lands inside the variant's spread; and a run deciding several comparisons
computes each interval at the level that keeps them all at the run's confidence."""

from __future__ import annotations

import random

import pytest

from perflab.lenses.time.analyse import TimeDetails
from perflab.lenses.time.statements import equal_duration_loops
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Sample
from perflab.records.settings import Settings
from perflab.stats.comparison import verdict_for
from perflab.stats.family import family_confidence, family_size
from perflab.stats.paired import PairedLogRatio, estimate_ratio
from tests.support.time_comparisons import time_comparison, time_samples

SUBJECT = "perflab.lenses.time.analyse"


def test_columns_come_from_the_corrected_samples_the_ratio_uses() -> None:
    # the baseline preempted in most samples, the variant in few: raw medians disagree with
    # the corrected ratio; the columns must not
    comparison, _ = time_comparison(time_samples(random.Random(1), preempted=(0.7, 0.1)))
    details = comparison.details
    assert isinstance(details, TimeDetails)
    assert 8.8 < comparison.ratio < 9.2
    raw = details.variant_value_measured / details.baseline_value_measured
    assert raw < 5  # the columns as measured give another ratio
    assert 0.98 < comparison.baseline_value / 1e5 < 1.02  # time lost to others taken out
    implied = comparison.baseline_value * comparison.ratio
    assert abs(implied / comparison.variant_value - 1) <= max(details.variant_spread, 0.01)
    out = comparison.to_json()
    assert out["value_estimator"] == "mean of group medians"
    assert out["value_preempted"] == "correct"
    assert out["baseline_value_measured"] > out["baseline_value"]


def test_columns_follow_the_exclude_policy() -> None:
    samples = time_samples(random.Random(2), preempted=(0.3, 0.3))
    comparison, _ = time_comparison(samples, Settings(preempted="exclude"))
    assert 0.98 < comparison.baseline_value / 1e5 < 1.02
    assert comparison.to_json()["value_preempted"] == "exclude"


def test_a_family_of_comparisons_is_decided_at_the_bonferroni_level() -> None:
    samples = time_samples(random.Random(3), preempted=(0.0, 0.0))
    alone, _ = time_comparison(samples)
    together, _ = time_comparison(samples, family=5)
    assert together.to_json()["confidence"] == family_confidence(0.95, 5) == 0.99
    assert together.to_json()["family_size"] == 5
    assert alone.to_json()["confidence"] == 0.95
    assert together.ci_low < alone.ci_low and together.ci_high > alone.ci_high
    assert together.ratio == alone.ratio


def test_family_size_counts_every_benchmark_pair_and_interaction() -> None:
    assert family_size(1, 1) == 1
    assert family_size(1, 5) == 5  # a 4-step stack: 4 steps and the whole range
    assert family_size(3, 2, 1) == 9
    assert family_size(0, 0) == 1


@pytest.mark.slow
def test_an_aa_family_of_identical_steps_claims_nothing_more_often_than_5_percent() -> None:
    """Simulated stacks of 5 comparisons of identical code with per-process effects: decided
    each at 95%, some false claim in far more than 5% of runs; at the family level, in at
    most about 5%."""
    rng = random.Random(4)
    runs, each, family = 200, 0, 0
    for _ in range(runs):
        claims = {1: False, 5: False}
        for _step in range(5):
            pairs = [
                PairedLogRatio(g, b, offset + rng.gauss(0, 0.014))
                for g in range(10)
                for offset in [rng.gauss(0, 0.028)]
                for b in range(6)
            ]
            for size in claims:
                estimate = estimate_ratio(pairs, family_confidence(0.95, size))
                verdict = verdict_for(estimate.ci_low, estimate.ci_high, 0.01)
                claims[size] |= verdict in (Verdict.FASTER, Verdict.SLOWER)
        each += claims[1]
        family += claims[5]
    assert each > 0.12 * runs
    assert family <= 0.08 * runs


def test_equal_duration_loops_give_every_variant_samples_of_one_length() -> None:
    def sample(variant: str, per_iteration: float, wait: float = 0.0) -> Sample:
        value, cpu = per_iteration * 100 + wait, int(per_iteration * 100)
        return Sample("b", variant, Metric.TIME, "wall_ns", value, loops=100,
                      run_queue_ns=int(wait), cpu_ns=cpu)  # fmt: skip

    loops = equal_duration_loops(
        [100, 100],
        [[sample("a", 1000.0)] * 3, [sample("b", 1750.0, wait=50_000)] * 3],
        0.2,
    )
    assert loops[0] == 20
    assert abs(loops[1] * 1750 / (loops[0] * 1000) - 1) < 0.05
    assert equal_duration_loops([100, 100], [[], []], 0.2) == [20, 20]


def test_uneven_preemption_is_named_in_a_warning_and_widens_the_interval() -> None:
    comparison, notes = time_comparison(time_samples(random.Random(5), preempted=(0.7, 0.1)))
    overload = comparison.to_json()["overload"]
    assert overload["uneven_preemption"] is True
    assert overload["action"] != "none"
    assert comparison.to_json()["extra_seconds_to_decide"] is None
    (note,) = [n for n in notes if "cannot repair" in n.message]
    assert note.severity.value == "warning"
    assert "`base`'s 7" in note.message and note.variant == "other"


def test_the_caption_says_what_the_columns_are_and_the_family_level() -> None:
    from perflab.lenses.time.render import caption

    samples = time_samples(random.Random(6), preempted=(0.0, 0.0))
    alone, _ = time_comparison(samples)
    together, _ = time_comparison(samples, family=5)
    text = caption([alone], 0.95)
    assert "samples the ratio uses (preempted time taken out)" in text
    assert "hold together" not in text
    text = caption([together], 0.95)
    assert "the 5 comparisons' intervals hold together (each at 99.00%)" in text
    assert "95% of the time" in text
