"""The axes the plots share (report/svg/axes.py): round ticks on linear and log scales, the log
scale of ratios and the range it covers, and the ratio axis below a plot."""

from __future__ import annotations

import math

import pytest

from perflab.report.svg.axes import (
    LogScale,
    format_ratio_tick,
    informative,
    linear_ticks,
    log_ticks,
    ratio_axis,
    ratio_domain,
)


def test_linear_ticks_are_round_steps_covering_the_range() -> None:
    assert linear_ticks(0, 10) == [0, 2, 4, 6, 8, 10]
    assert linear_ticks(0.13, 0.91) == [0.2, 0.4, 0.6, 0.8]
    assert linear_ticks(95, 1040) == [200, 400, 600, 800, 1000]
    assert linear_ticks(3, 3) == [3] and linear_ticks(5, 1) == [5]
    assert linear_ticks(math.nan, 1) == []


def test_log_ticks_hold_one_and_stay_few() -> None:
    narrow = log_ticks(0.97, 1.04)
    assert 1.0 in narrow and all(0.97 <= t <= 1.04 for t in narrow)
    wide = log_ticks(0.001, 1000)
    assert 1.0 in wide and len(wide) <= 9
    assert wide == sorted(wide)


def test_log_ticks_reach_near_each_end_of_the_axis() -> None:
    ticks = log_ticks(1.0, 1.6)
    assert ticks[0] == 1.0 and ticks[-1] >= 1.5


def test_a_ratio_tick_has_three_digits_or_none_after_a_hundred() -> None:
    assert [format_ratio_tick(t) for t in (0.955, 1.0, 1.25, 250.4)] == [
        "0.955",
        "1",
        "1.25",
        "250",
    ]


def test_the_log_scale_maps_ratios_to_pixels_and_clips_outside() -> None:
    x = LogScale(0.5, 2.0, 100.0, 300.0)
    assert x(1.0) == pytest.approx(200.0)  # 1 halfway between 1/2 and 2 in log space
    assert x(0.5) == pytest.approx(100.0) and x(2.0) == pytest.approx(300.0)
    assert x(10.0) == pytest.approx(300.0) and x(0.01) == pytest.approx(100.0)


def test_the_domain_holds_one_the_band_and_every_finite_ratio() -> None:
    low, high = ratio_domain([1.3, math.inf, math.nan, 0.0], band=0.01)
    assert low < 0.99 and high > 1.3
    quiet_low, quiet_high = ratio_domain([], band=0.02)
    assert quiet_low < 0.98 < 1.02 < quiet_high


def test_an_interval_wider_than_four_times_says_too_little_to_set_the_axis() -> None:
    assert informative(0.9, 1.1)
    assert not informative(0.1, 1.0)
    assert not informative(0.0, 1.0) and not informative(0.5, math.inf)


def test_the_ratio_axis_has_the_line_at_one_its_ticks_and_its_caption() -> None:
    x = LogScale(0.5, 2.0, 0.0, 200.0)
    body = "".join(ratio_axis(x, 10.0, 90.0, "ratio <to> baseline"))
    assert '<line x1="100" x2="100" y1="10" y2="90"' in body and "stroke-dasharray" in body
    assert body.count("<text") == len(log_ticks(0.5, 2.0)) + 1
    assert "ratio &lt;to&gt; baseline" in body
