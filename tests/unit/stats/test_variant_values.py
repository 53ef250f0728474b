"""Each variant's value per iteration (stats.variant_values) from the pairs the ratio uses, so
that a table's two values and its ratio agree."""

from __future__ import annotations

import math

import pytest

from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.paired import PairedLogRatio, estimate_ratio
from perflab.stats.trimmed import MIN_UNITS_TO_TRIM
from perflab.stats.variant_values import (
    TRIMMED_VALUE_ESTIMATOR,
    VALUE_ESTIMATOR,
    VariantCentres,
    VariantValues,
    estimator_name,
    paired_centres,
    paired_spreads,
)

TIME = Metric("time")


def sample(variant: str, value: float, generation: int, *, loops: int = 1) -> Sample:
    return Sample("b", variant, TIME, "wall_ns", value, loops=loops, generation=generation)


def kept(
    pairs: list[tuple[int, float, float]], *, loops: int = 1
) -> list[tuple[int, Sample, Sample]]:
    """(group, variant value, baseline value) -> kept_pairs' (group, variant, baseline)."""
    return [
        (group, sample("B", v, group, loops=loops), sample("A", b, group, loops=loops))
        for group, v, b in pairs
    ]


def test_the_values_are_the_geometric_mean_of_the_group_medians() -> None:
    # group 0's median of 10, 20, 40 is 20; group 1 has one pair: 80
    pairs = kept([(0, 10.0, 1.0), (0, 20.0, 2.0), (0, 40.0, 4.0), (1, 80.0, 8.0)])
    centres = paired_centres(pairs)
    assert centres.variant == pytest.approx(math.sqrt(20.0 * 80.0))
    assert centres.baseline == pytest.approx(math.sqrt(2.0 * 8.0))
    assert centres.estimator == VALUE_ESTIMATOR


def test_the_values_are_per_iteration() -> None:
    centres = paired_centres(kept([(0, 1000.0, 500.0)], loops=100))
    assert (centres.variant, centres.baseline) == pytest.approx((10.0, 5.0))


def test_with_one_pair_a_group_the_values_divide_into_the_ratio() -> None:
    values = [(g, 100.0 + 7 * g, 90.0 + (g % 3)) for g in range(6)]
    centres = paired_centres(kept(values))
    ratio = estimate_ratio([PairedLogRatio(g, 0, math.log(v / b)) for g, v, b in values]).ratio
    assert centres.variant / centres.baseline == pytest.approx(ratio)


def test_units_weigh_each_unit_the_same() -> None:
    # groups 0 and 1 form unit 0 (log 100, the mean of log 10 and log 1000); group 2 is a unit
    # of its own (log 10): exp of their mean is sqrt(100 * 10)
    pairs = kept([(0, 10.0, 1.0), (1, 1000.0, 1.0), (2, 10.0, 1.0)])
    by_unit = paired_centres(pairs, {0: 0, 1: 0})
    assert by_unit.variant == pytest.approx(math.sqrt(100.0 * 10.0))
    by_group = paired_centres(pairs)
    assert by_group.variant == pytest.approx((10.0 * 1000.0 * 10.0) ** (1 / 3))


def test_trimming_drops_a_spoiled_unit_and_says_so() -> None:
    n = MIN_UNITS_TO_TRIM
    values = [(g, 10.0, 5.0) for g in range(n - 1)] + [(n - 1, 10_000.0, 5.0)]
    trimmed = paired_centres(kept(values), trimmed=True)
    assert trimmed.variant == pytest.approx(10.0)
    assert trimmed.estimator == TRIMMED_VALUE_ESTIMATOR
    plain = paired_centres(kept(values))
    assert plain.variant > 10.0
    assert plain.estimator == VALUE_ESTIMATOR


def test_too_few_units_are_not_trimmed_and_the_words_say_so() -> None:
    assert estimator_name(MIN_UNITS_TO_TRIM - 1, trimmed=True) == VALUE_ESTIMATOR
    assert estimator_name(MIN_UNITS_TO_TRIM, trimmed=True) == TRIMMED_VALUE_ESTIMATOR
    assert estimator_name(MIN_UNITS_TO_TRIM, trimmed=False) == VALUE_ESTIMATOR
    few = paired_centres(kept([(0, 10.0, 1.0), (1, 1000.0, 1.0)]), trimmed=True)
    assert few.variant == pytest.approx(100.0)
    assert few.estimator == VALUE_ESTIMATOR


def test_no_pairs_give_no_value() -> None:
    centres = paired_centres([])
    assert math.isnan(centres.variant) and math.isnan(centres.baseline)
    assert all(math.isnan(s) for s in paired_spreads([]))


def test_spreads_are_each_sides_relative_mad_baseline_first() -> None:
    # baseline 9, 10, 11: MAD 1 of median 10; variant 20, 20, 30: MAD 0 of median 20
    pairs = kept([(0, 20.0, 9.0), (0, 20.0, 10.0), (1, 30.0, 11.0)])
    baseline_spread, variant_spread = paired_spreads(pairs)
    assert baseline_spread == pytest.approx(0.1)
    assert variant_spread == 0.0


def test_values_join_centres_and_spreads() -> None:
    centres = VariantCentres(baseline=2.0, variant=3.0, estimator=TRIMMED_VALUE_ESTIMATOR)
    values = VariantValues.of(centres, (0.1, 0.2))
    assert values == VariantValues(2.0, 3.0, 0.1, 0.2, TRIMMED_VALUE_ESTIMATOR)
