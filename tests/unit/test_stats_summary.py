"""One variant's samples summarised: spread and the interval of repeated counts."""

from __future__ import annotations

import math

import pytest

from perflab.stats.summary import ratio_interval, relative_spread


def test_relative_spread_is_the_mad_over_the_median() -> None:
    assert relative_spread([90.0, 100.0, 110.0, 100.0, 500.0]) == pytest.approx(0.1)
    assert math.isnan(relative_spread([]))
    assert math.isnan(relative_spread([0.0, 0.0]))


def test_ratio_interval_spans_every_combination_of_repeats() -> None:
    assert ratio_interval([100.0, 110.0], [90.0, 99.0]) == pytest.approx(
        (94.5 / 105.0, 90.0 / 110.0, 99.0 / 100.0)
    )
    assert all(math.isnan(x) for x in ratio_interval([], [1.0]))
