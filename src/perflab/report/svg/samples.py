"""Raw samples over the run: one panel per variant on a shared time axis, worker generations
shaded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perflab.records.document import TimePoint, TimeSeries
from perflab.records.units import format_ns
from perflab.report.escape import html_text as escape
from perflab.report.svg.axes import linear_ticks
from perflab.report.svg.canvas import coord, svg_document, svg_text, variant_colour


def value_range(values: Sequence[float]) -> tuple[float, float]:
    """The y range of a panel: all values, except that far outliers (a preempted sample 10x the
    rest) are cut so the bulk of the samples keeps its resolution; cut points sit on the edge.
    Far means beyond the median + 12 MADs: two modes of a bimodal benchmark both stay in."""
    ordered = sorted(values)
    if not ordered:
        return 0.0, 1.0
    low, high = ordered[0], ordered[-1]
    median = ordered[len(ordered) // 2]
    mad = sorted(abs(v - median) for v in ordered)[len(ordered) // 2]
    limit = median + 12 * 1.4826 * mad
    if mad > 0 and high > limit:
        high = max(v for v in ordered if v <= limit)
    if high - low <= 0:
        pad = abs(low) * 0.01 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.06
    return low - pad, high + pad


def generation_spans(series: Sequence[TimeSeries]) -> list[tuple[int, float, float]]:
    """(generation, first, last sample time) over all series, in time order."""
    spans: dict[int, tuple[float, float]] = {}
    for one in series:
        for p in one.points:
            first, last = spans.get(p.generation, (p.at_s, p.at_s))
            spans[p.generation] = (min(first, p.at_s), max(last, p.at_s))
    return sorted(((g, a, b) for g, (a, b) in spans.items()), key=lambda s: s[1])


def time_scatter(
    series: Sequence[TimeSeries],
    *,
    format_value: Callable[[float], str] = format_ns,
    width: float = 960,
    panel_px: float = 130,
) -> str:
    """One panel per variant (its own y range: variants may differ 10x) on a shared time axis;
    alternate generations are shaded so per-process shifts line up with worker restarts."""
    left, right, top, gap, bottom = 78.0, 16.0, 8.0, 22.0, 34.0
    height = top + len(series) * (panel_px + gap) + bottom - gap
    end_s = max((p.at_s for s in series for p in s.points), default=1.0) or 1.0
    plot_w = width - left - right

    def x(at_s: float) -> float:
        return left + at_s / end_s * plot_w

    body: list[str] = []
    spans = generation_spans(series)
    for k, (generation, first, last) in enumerate(spans):
        if k % 2:
            body.append(
                f'<rect x="{coord(x(first) - 1.5)}" y="{coord(top)}" '
                f'width="{coord(x(last) - x(first) + 3)}" height="{coord(height - top - bottom)}" '
                f'fill="#000" fill-opacity="0.045"><title>generation {generation}</title></rect>'
            )
    for index, one in enumerate(series):
        panel = _Panel(left, width - right, top + index * (panel_px + gap), panel_px)
        body += _scatter_panel(one, panel, x, format_value)
    axis_y = height - bottom
    for tick in linear_ticks(0, end_s, 8):
        body.append(
            f'<line x1="{coord(x(tick))}" x2="{coord(x(tick))}" y1="{coord(axis_y)}" '
            f'y2="{coord(axis_y + 4)}" stroke="#666"/>'
        )
        body.append(svg_text(x(tick), axis_y + 15, f"{tick:g} s", anchor="middle"))
    body.append(
        svg_text(
            left + plot_w / 2,
            axis_y + 30,
            "time since the run started; shaded: alternate worker generations; "
            "hollow: warm-up (not analysed)",
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    return svg_document(width, height, body, "per-iteration time of every sample over the run")


@dataclass(frozen=True)
class _Panel:
    """Where one variant's panel of the time scatter lies in its picture, in pixels."""

    left: float
    right: float
    top: float
    height: float


def _scatter_panel(
    one: TimeSeries,
    panel: _Panel,
    x: Callable[[float], float],
    format_value: Callable[[float], str],
) -> list[str]:
    one_colour = variant_colour(one.index)
    low, high = value_range(
        [p.value for p in one.points if not p.warmup] or [p.value for p in one.points]
    )

    def y(value: float) -> float:
        return panel.top + panel.height - (value - low) / (high - low) * panel.height

    body = [
        f'<rect x="{coord(panel.left)}" y="{coord(panel.top)}" '
        f'width="{coord(panel.right - panel.left)}" '
        f'height="{coord(panel.height)}" fill="none" stroke="#ccc"/>',
        svg_text(
            panel.left + 6,
            panel.top + 13,
            one.label,
            extra=f' fill="{one_colour}" font-weight="600"',
        ),
    ]
    for tick in linear_ticks(low, high, 4):
        body.append(
            f'<line x1="{coord(panel.left)}" x2="{coord(panel.right)}" y1="{coord(y(tick))}" '
            f'y2="{coord(y(tick))}" stroke="#000" stroke-opacity="0.07"/>'
        )
        body.append(svg_text(panel.left - 5, y(tick) + 4, format_value(tick), anchor="end"))
    dots = "".join(
        _scatter_dot(p, x(p.at_s), y(min(p.value, high)), p.value > high, one_colour, format_value)
        for p in one.points
    )
    body.append(f'<g fill="{one_colour}" fill-opacity="0.6">{dots}</g>')
    return body


def _scatter_dot(
    point: TimePoint,
    cx: float,
    cy: float,
    off_scale: bool,
    colour: str,
    format_value: Callable[[float], str],
) -> str:
    if off_scale:  # a far outlier: a triangle on the panel's top edge
        return (
            f'<path d="M{coord(cx)},{coord(cy - 1)} l-3.5,6 h7 Z" fill="{colour}">'
            f"<title>{escape(format_value(point.value))} (off scale)</title></path>"
        )
    if point.warmup:
        return (
            f'<circle cx="{coord(cx)}" cy="{coord(cy)}" r="2.2" fill="none" '
            f'stroke="{colour}" stroke-opacity="0.6"/>'
        )
    return f'<circle cx="{coord(cx)}" cy="{coord(cy)}" r="2.2"/>'
