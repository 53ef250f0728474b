"""The history's trend chart read as a reader sees it: every value label whole, in scaled units,
inside the picture; commits named on their axis, the change points first, no two labels on top
of each other, however many commits."""

from __future__ import annotations

import hashlib
import itertools
import re
import xml.etree.ElementTree as ET

import pytest

from perflab.records.document import Style, TrendFigure, TrendMark, TrendPoint
from perflab.report import svg
from perflab.report.svg.axes import linear_ticks
from perflab.report.svg.canvas import style_colour
from perflab.report.svg.trend_chart import TREND_FONT_PX, scaled_tick_labels, text_width

SVG = "{http://www.w3.org/2000/svg}"


def figure(values: list[float | None], unit: str, marks: tuple[int, ...] = ()) -> TrendFigure:
    ids = tuple(hashlib.sha1(str(i).encode()).hexdigest()[:7] for i in range(len(values)))
    points = tuple(
        TrendPoint(i, v, f"{ids[i]}: {v}") for i, v in enumerate(values) if v is not None
    )
    trend_marks = tuple(TrendMark(i, f"change at {ids[i]}", Style.SLOWER) for i in marks)
    return TrendFigure(
        title="trend",
        points=points,
        positions=len(values),
        marks=trend_marks,
        unit=unit,
        axis_labels=ids,
    )


def texts(picture: str) -> list[tuple[float, str, str]]:
    """(x, anchor, text) of every label."""
    root = ET.fromstring(picture)
    return [
        (float(t.get("x", "0")), t.get("text-anchor", "start"), t.text or "")
        for t in root.iter(f"{SVG}text")
    ]


def steps(n: int, low: float, high: float, at: int) -> list[float | None]:
    return [(high if i >= at else low) * (1 + 0.0003 * (i % 3)) for i in range(n)]


def test_tick_labels_are_scaled_and_tell_neighbours_apart() -> None:
    ticks = linear_ticks(26e6, 29.5e6, 5)
    assert scaled_tick_labels(ticks, "instructions") == [
        "26 M instructions", "27 M instructions", "28 M instructions", "29 M instructions",
    ]  # fmt: skip
    assert scaled_tick_labels([27.10e6, 27.12e6, 27.14e6], "instructions") == [
        "27.10 M instructions", "27.12 M instructions", "27.14 M instructions",
    ]  # fmt: skip
    assert scaled_tick_labels([12.0e6, 12.5e6, 13.0e6], "ns") == [
        "12.0 ms",
        "12.5 ms",
        "13.0 ms",
    ]
    # one unit for the axis, the one of its largest value
    assert scaled_tick_labels([800.0, 1000.0, 1200.0], "ns") == ["0.8 µs", "1.0 µs", "1.2 µs"]
    assert scaled_tick_labels([1500.0, 2000.0], "ns") == ["1.5 µs", "2.0 µs"]
    assert scaled_tick_labels([0.25, 0.5], "s") == ["250 ms", "500 ms"]
    assert scaled_tick_labels([500.0, 502.0], "instructions") == [
        "500 instructions", "502 instructions",
    ]  # fmt: skip
    assert scaled_tick_labels([2e9, 4e9], "bytes") == ["2 G bytes", "4 G bytes"]
    assert scaled_tick_labels([], "ns") == []


@pytest.mark.parametrize(
    ("unit", "low", "high"),
    [
        ("instructions", 27_129_713.0, 29_110_000.0),
        ("instructions", 13_564_856.5, 27_129_713.0),
        ("instructions", 1_330_126.0, 2_530_127.0),
        ("ns", 12_400_000.0, 13_300_000.0),
        ("ns", 812.0, 1_530.0),
        ("instructions", 4.2e12, 4.3e12),
    ],
)
def test_every_value_label_is_whole_and_fits_the_left_margin(
    unit: str, low: float, high: float
) -> None:
    picture = svg.trend(figure(steps(41, low, high, 17), unit, marks=(17,)))
    values = [(x, text) for x, anchor, text in texts(picture) if anchor == "end"]
    assert len(values) >= 3
    for x, text in values:
        assert "…" not in text and re.fullmatch(r"-?\d+(\.\d+)? \S.*", text), text
        assert text_width(text, TREND_FONT_PX) <= x, text  # inside the picture
    numbers = [float(text.split()[0]) for _, text in values]
    assert numbers == sorted(set(numbers))  # from the bottom up, none repeated


@pytest.mark.parametrize("commits", [2, 9, 41, 120, 501])
def test_the_commit_axis_names_commits_that_never_overlap(commits: int) -> None:
    changes = (commits // 2,) if commits > 2 else ()
    shown = figure(steps(commits, 1e6, 2e6, commits // 2), "instructions", marks=changes)
    picture = svg.trend(shown)
    width = float(ET.fromstring(picture).get("width", "0"))
    labels = [(x, t) for x, a, t in texts(picture) if a == "middle" and t in shown.axis_labels]
    extents = sorted(
        (x - text_width(t, TREND_FONT_PX) / 2, x + text_width(t, TREND_FONT_PX) / 2)
        for x, t in labels
    )
    assert extents[0][0] >= 0 and extents[-1][1] <= width  # inside the picture
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(extents))  # none on another
    named = {t for _, t in labels}
    assert {shown.axis_labels[0], shown.axis_labels[-1]} <= named  # the oldest, the newest
    assert {shown.axis_labels[i] for i in changes} <= named  # the change points, always
    assert len(named) >= min(commits, 6)  # as many as fit, not only the ends


def test_a_change_points_commit_is_named_in_its_colour() -> None:
    shown = figure(steps(41, 1e6, 2e6, 17), "instructions", marks=(17,))
    root = ET.fromstring(svg.trend(shown))
    (label,) = [t for t in root.iter(f"{SVG}text") if t.text == shown.axis_labels[17]]
    assert label.get("fill") == style_colour(Style.SLOWER)


def test_a_trend_without_commit_labels_keeps_its_old_axis() -> None:
    bare = figure(steps(5, 100.0, 200.0, 2), "ns", marks=())
    bare = TrendFigure(
        title=bare.title,
        points=bare.points,
        positions=bare.positions,
        marks=bare.marks,
        unit=bare.unit,
    )
    found = texts(svg.trend(bare))
    assert not [t for _, a, t in found if a == "middle" and "commits" not in t]
    assert "5 commits, oldest first" in [t for _, _, t in found]  # and no change point
