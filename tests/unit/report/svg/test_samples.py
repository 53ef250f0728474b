"""Raw samples over the run (report/svg/samples.py): a panel's range keeps the bulk of the
samples readable and puts far outliers on its edge, generations shaded in turn, warm-up hollow."""

from __future__ import annotations

import pytest

from perflab.records.document import TimePoint, TimeSeries
from perflab.report.svg.samples import generation_spans, time_scatter, value_range


def test_the_range_holds_every_value_padded() -> None:
    low, high = value_range([10.0, 11.0, 12.0])
    assert low < 10.0 and high > 12.0
    assert value_range([]) == (0.0, 1.0)
    flat_low, flat_high = value_range([5.0, 5.0])
    assert flat_low == pytest.approx(4.95) and flat_high == pytest.approx(5.05)


def test_a_far_outlier_is_cut_but_two_modes_both_stay() -> None:
    bulk = [100.0 + i % 5 for i in range(40)]
    _, high = value_range([*bulk, 5000.0])  # a preempted sample 50x the rest
    assert high < 200.0
    two_modes = [100.0] * 20 + [160.0] * 20
    assert value_range(two_modes)[1] > 160.0


def series(label: str, index: int, points: list[tuple[float, float, int, bool]]) -> TimeSeries:
    return TimeSeries(label, index, tuple(TimePoint(*p) for p in points))


def test_generations_span_their_samples_over_every_series_in_time_order() -> None:
    a = series("A", 0, [(0.0, 1.0, 0, False), (1.0, 1.0, 0, False), (3.0, 1.0, 1, False)])
    b = series("B", 1, [(1.5, 1.0, 0, False), (2.5, 1.0, 1, False)])
    assert generation_spans([a, b]) == [(0, 0.0, 1.5), (1, 2.5, 3.0)]


def test_the_scatter_has_a_panel_per_variant_and_marks_warm_up_and_outliers() -> None:
    points = [(i * 0.1, 100.0 + i % 5, i // 10, i == 0) for i in range(40)]
    points.append((4.0, 9000.0, 3, False))
    drawn = time_scatter([series("A (baseline)", 0, points), series("B <x>", 1, points)])
    assert drawn.count('stroke="#ccc"') == 2  # a panel each
    assert "B &lt;x&gt;" in drawn
    assert "(off scale)" in drawn  # the far outlier, a triangle on the edge
    assert 'fill="none"' in drawn and "hollow: warm-up" in drawn
    assert drawn.count("<title>generation") == 2  # alternate generations shaded
