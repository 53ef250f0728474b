"""The trend chart: a value per commit along the line of history, with its change points."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perflab.records.document import TrendFigure, TrendMark, TrendPoint
from perflab.report.escape import html_text as escape
from perflab.report.svg.axes import linear_ticks
from perflab.report.svg.canvas import coord, style_colour, svg_document, svg_text, variant_colour


def trend_range(values: Sequence[float]) -> tuple[float, float]:
    """The y range of a trend: every value with a tenth of their span around it; a level change
    must never be cut off as an outlier would be."""
    low, high = min(values), max(values)
    span = (high - low) or max(abs(high) * 0.05, 1.0)
    return low - span * 0.1, high + span * 0.1


def trend_ticks(low: float, high: float) -> list[float]:
    """Four to about eight round values: a 1-2-5 step rounded up can leave two on a short
    axis, too few to read a level from."""
    ticks = linear_ticks(low, high, 5)
    count = 5
    while len(ticks) < 4 and count < 10:
        count += 1
        ticks = linear_ticks(low, high, count)
    return ticks


# the trend's text size: it is read at the top of its page, also scaled down in a narrow window
TREND_FONT_PX = 12.0
# an average character of a sans-serif font (DejaVu Sans: letters 0.28-0.86 em, digits 0.64);
# the margins and gaps around labels leave room for a bold or wide one
_EM_PER_CHAR = 0.6


def text_width(text: str, font_px: float = 11.0) -> float:
    """A label's width in px, estimated on the wide side: labels are laid out without a browser."""
    return len(text) * font_px * _EM_PER_CHAR


_SI_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_TIME_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_NS_PER = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def scaled_tick_labels(ticks: Sequence[float], unit: str) -> list[str]:
    """Tick values in one scaled unit ("27.1 M instructions", "12.4 ms") with as many decimals
    as tell neighbouring ticks apart: short enough to fit beside the axis, never ambiguous."""
    if not ticks:
        return []
    if unit in _NS_PER:  # a time: in the unit its size reads best in
        ticks = [t * _NS_PER[unit] for t in ticks]
        largest = max(abs(t) for t in ticks)
        scale, name = next(((s, u) for s, u in _TIME_UNITS if largest >= s), _TIME_UNITS[-1])
    else:
        largest = max(abs(t) for t in ticks)
        scale, prefix = next(((s, p) for s, p in _SI_PREFIXES if largest >= s), (1.0, ""))
        name = f"{prefix} {unit if unit != 'count' else ''}".strip()
    steps = [b - a for a, b in itertools.pairwise(ticks) if b > a]
    step = min(steps) if steps else (largest or 1.0)
    decimals = max(0, -math.floor(math.log10(step / scale) + 1e-9))
    suffix = f" {name}" if name else ""
    return [f"{t / scale:.{decimals}f}{suffix}" for t in ticks]


@dataclass(frozen=True)
class _TrendLayout:
    """Where a trend's plot lies in its picture: margins sized to the labels they hold."""

    left: float
    right: float  # the plot's right edge
    top: float
    bottom: float  # the commit axis
    positions: int
    low: float
    high: float

    def x(self, position: int) -> float:
        return self.left + (self.right - self.left) * position / max(self.positions - 1, 1)

    def y(self, value: float) -> float:
        return self.bottom - (value - self.low) / (self.high - self.low) * (self.bottom - self.top)


def axis_label_places(
    labels: Sequence[str], x: Callable[[int], float], first: Sequence[int], font_px: float
) -> list[int]:
    """The places whose label the commit axis shows: those in `first` (the change points),
    the oldest, the newest, then evenly spaced ones; each only where it overlaps none already
    placed, so every label shown is whole."""
    named = [p for p, label in enumerate(labels) if label]
    if not named:
        return []
    gap = font_px
    widest = max(text_width(labels[p], font_px) for p in named) + gap
    every = max(1, math.ceil(widest / max(x(1) - x(0), 1e-9)))
    wanted = [*first, 0, len(labels) - 1, *range(0, len(labels), every)]
    taken: dict[int, tuple[float, float]] = {}  # a place shown -> its label's extent
    for place in dict.fromkeys(p for p in wanted if 0 <= p < len(labels) and labels[p]):
        half = text_width(labels[place], font_px) / 2
        low, high = x(place) - half, x(place) + half
        if all(high + gap <= a or low - gap >= b for a, b in taken.values()):
            taken[place] = (low, high)
    return sorted(taken)


def trend(figure: TrendFigure, *, width: float = 800, height: float = 300) -> str:
    """The measured commits as a line (each a dot with its hover text) over their places on the
    line of history, on a value axis in scaled units; the commit axis names as many commits as
    fit, the change points first; change points as dashed vertical lines, each linked to its
    comparison when it has one."""
    font = TREND_FONT_PX
    low, high = trend_range([p.value for p in figure.points])
    ticks = trend_ticks(low, high)
    tick_labels = scaled_tick_labels(ticks, figure.unit)
    widest_tick = max((text_width(label, font) for label in tick_labels), default=0.0)
    widest_commit = max((text_width(label, font) for label in figure.axis_labels), default=0.0)
    layout = _TrendLayout(
        left=max(48.0, widest_tick + 16),
        right=width - max(16.0, widest_commit / 2 + 10),
        top=12.0,
        bottom=height - (52.0 if figure.axis_labels else 34.0),
        positions=figure.positions,
        low=low,
        high=high,
    )
    body = _trend_value_axis(layout, ticks, tick_labels)
    body += _trend_commit_axis(figure, layout, font)
    body += [
        _trend_mark(mark, layout.x(mark.position), layout.top, layout.bottom)
        for mark in figure.marks
    ]
    line = " ".join(
        f"{coord(layout.x(p.position))},{coord(layout.y(p.value))}" for p in figure.points
    )
    colour = variant_colour(0)
    body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
    body += [_trend_dot(p, layout, colour) for p in figure.points]
    label = f"{figure.title}: {figure.summary}" if figure.summary else figure.title
    return svg_document(width, height, body, label, font_px=font)


def _trend_dot(point: TrendPoint, layout: _TrendLayout, colour: str) -> str:
    dot = (
        f'<circle cx="{coord(layout.x(point.position))}" cy="{coord(layout.y(point.value))}" r="3" '
        f'fill="{colour}"><title>{escape(point.label)}</title></circle>'
    )
    return f'<a href="{escape(point.href)}">{dot}</a>' if point.href else dot


def _trend_value_axis(
    layout: _TrendLayout, ticks: Sequence[float], labels: Sequence[str]
) -> list[str]:
    """Value gridlines, each labelled whole in the left margin (sized to hold the widest)."""
    body = []
    for tick, text in zip(ticks, labels, strict=True):
        at_y = layout.y(tick)
        body.append(
            f'<line x1="{coord(layout.left)}" x2="{coord(layout.right)}" y1="{coord(at_y)}" '
            f'y2="{coord(at_y)}" stroke="#000" stroke-opacity="0.07"/>'
        )
        body.append(svg_text(layout.left - 6, at_y + 4, text, anchor="end"))
    return body


def _trend_commit_axis(figure: TrendFigure, layout: _TrendLayout, font: float) -> list[str]:
    """The commit axis: the commits named where they fit (a change point's in its colour) and
    what the axis shows."""
    axis_y = layout.bottom
    body = [
        f'<line x1="{coord(layout.left)}" x2="{coord(layout.right)}" y1="{coord(axis_y)}" '
        f'y2="{coord(axis_y)}" stroke="#999"/>'
    ]
    colours = {m.position: style_colour(m.style) for m in figure.marks}
    labels = figure.axis_labels
    for place in axis_label_places(labels, layout.x, list(colours), font):
        at_x = layout.x(place)
        extra = f' fill="{colours[place]}" font-weight="600"' if place in colours else ""
        body.append(
            f'<line x1="{coord(at_x)}" x2="{coord(at_x)}" y1="{coord(axis_y)}" '
            f'y2="{coord(axis_y + 4)}" '
            'stroke="#666"/>'
        )
        body.append(svg_text(at_x, axis_y + 17, labels[place], anchor="middle", extra=extra))
    said = "; ".join(
        words
        for words, shown in (("commit ids", labels), ("dashed: change points", figure.marks))
        if shown
    )
    caption = f"{figure.positions} commits, oldest first" + (f" ({said})" if said else "")
    body.append(
        svg_text(
            (layout.left + layout.right) / 2,
            axis_y + (38 if labels else 22),
            caption,
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    return body


def _trend_mark(mark: TrendMark, at_x: float, top: float, bottom: float) -> str:
    line = (
        f'<line x1="{coord(at_x)}" y1="{coord(top)}" x2="{coord(at_x)}" y2="{coord(bottom)}" '
        f'stroke="{style_colour(mark.style)}" stroke-dasharray="4 3" stroke-width="2">'
        f"<title>{escape(mark.label)}</title></line>"
    )
    return f'<a href="{escape(mark.href)}">{line}</a>' if mark.href else line
