"""Inline SVG plots for the HTML report. Pure: plot data in, an <svg> string out. One module over
800 lines on purpose: its six figures share one set of scales, ticks, labels and colours.

No JavaScript and no external resources: a report must open from a file on a machine without
network. Hover text is SVG <title>, which every browser shows as a tooltip.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from perflab.records.document import (
    FlameNode,
    GroupRatios,
    Style,
    TimePoint,
    TimeSeries,
    TrendFigure,
    TrendMark,
    TrendPoint,
    WaterfallBar,
    WaterfallFigure,
)
from perflab.records.kinds import Verdict
from perflab.records.units import format_ns, format_ratio
from perflab.report.escape import html_text as escape

# Colour-blind-friendlier categorical palette (Tableau 10); the baseline takes the first colour.
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
VERDICT_COLOURS = {
    Verdict.FASTER: "#1a7f37",
    Verdict.SLOWER: "#cf222e",
    Verdict.EQUIVALENT: "#0a7ea4",
    Verdict.INCONCLUSIVE: "#b7791f",
    Verdict.INVALID: "#8250df",
}
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"
_CHAR_PX = 6.6  # width of one character at 11px: to decide how much of a label fits


def variant_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _f(value: float) -> str:
    """Coordinates with one decimal: enough for the screen, small files."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _svg(
    width: float, height: float, body: Sequence[str], label: str, *, font_px: float = 11.0
) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" '
        f'aria-label="{escape(label)}" viewBox="0 0 {_f(width)} {_f(height)}" '
        f'width="{_f(width)}" height="{_f(height)}" style="{_FONT};font-size:{_f(font_px)}px">'
        + "".join(body)
        + "</svg>"
    )


def _text(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def fit_label(text: str, width_px: float) -> str:
    """As much of `text` as fits in `width_px` at 11px, with an ellipsis when cut."""
    fits = int(width_px / _CHAR_PX)
    if fits >= len(text):
        return text
    return text[: fits - 1] + "…" if fits >= 3 else ""


# --- axes -----------------------------------------------------------------------------------


def linear_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 5 x 10^k steps) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


_LOG_CANDIDATES = sorted(
    {m * 10.0**k for k in range(-4, 5) for m in (1, 2, 5)}
    | {0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99}
    | {1.01, 1.02, 1.05, 1.1, 1.2, 1.25, 1.5, 3, 4}
)


def _round_inside(value: float, low: float, high: float) -> float | None:
    """`value` rounded to two significant digits, if that stays inside [low, high]."""
    if value <= 0:
        return None
    digits = 1 - math.floor(math.log10(value))
    rounded = round(value, digits)
    return rounded if low <= rounded <= high else None


def log_ticks(low: float, high: float, count: int = 7) -> list[float]:
    """Tick values for a ratio axis on a log scale: 1 always (when in range), then round values
    near 1 for narrow ranges or 1-2-5 decades for wide ones, at most about `count`."""
    inside = [t for t in _LOG_CANDIDATES if low <= t <= high]
    span = math.log(high) - math.log(low)
    if len(inside) <= count:
        chosen = inside
    else:
        # thin out evenly in log space, keeping 1
        chosen = [1.0] if low <= 1.0 <= high else []
        min_gap = span / count
        for tick in sorted(inside, key=lambda t: abs(math.log(t))):
            if all(abs(math.log(tick) - math.log(c)) >= min_gap * 0.9 for c in chosen):
                chosen.append(tick)
    # the axis is read up to its ends: a tick near each end when the round ones stop short
    edge = span * 0.12
    for end, inward in ((low, 1.04), (high, 1 / 1.04)):
        if chosen and min(abs(math.log(end) - math.log(c)) for c in chosen) <= span / 4:
            continue
        near = _round_inside(end * inward, low, high)
        if near is not None and all(abs(math.log(near) - math.log(c)) >= edge for c in chosen):
            chosen.append(near)
    return sorted(chosen)


def format_ratio_tick(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class _LogScale:
    low: float
    high: float
    start_px: float
    end_px: float

    def __call__(self, value: float) -> float:
        value = min(max(value, self.low), self.high)
        span = math.log(self.high) - math.log(self.low)
        return self.start_px + (math.log(value) - math.log(self.low)) / span * (
            self.end_px - self.start_px
        )


def ratio_domain(values: Sequence[float], band: float) -> tuple[float, float]:
    """A log-scale range holding 1, the equivalence band and every finite positive value."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    low = min([1 - band, *finite])
    high = max([1 + band, *finite])
    pad = (math.log(high) - math.log(low)) * 0.08 or 0.01
    return math.exp(math.log(low) - pad), math.exp(math.log(high) + pad)


# An interval wider than this factor (high / low) says little about where the ratio is: it does
# not set the axis (its ends are clipped at the edge and marked), so it cannot flatten every
# informative row onto 1.
UNINFORMATIVE_SPAN = 4.0


def informative(ci_low: float, ci_high: float) -> bool:
    return ci_low > 0 and math.isfinite(ci_high) and ci_high / ci_low <= UNINFORMATIVE_SPAN


def wrap_label(text: str, width_px: float) -> list[str]:
    """The whole label in lines that fit `width_px` at 11px, broken after " · " separators (a
    part longer than a line is broken inside): a label is never cut."""
    fits = max(8, int(width_px / _CHAR_PX))
    lines: list[str] = []
    line = ""
    for part in text.split(" · "):
        candidate = f"{line} · {part}" if line else part
        if len(candidate) <= fits:
            line = candidate
            continue
        if line:
            lines.append(line + " ·")
        while len(part) > fits:
            lines.append(part[:fits])
            part = part[fits:]
        line = part
    lines.append(line)
    return lines


# --- forest plot ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ForestRow:
    label: str
    ratio: float
    ci_low: float  # 0 when unbounded below
    ci_high: float  # inf when unbounded above
    verdict: Verdict

    @property
    def exact(self) -> bool:
        """A zero-width interval: a deterministic count, measured exactly."""
        return self.ci_low == self.ci_high == self.ratio


# A zero-width interval that is `inconclusive` is not waiting for more measuring (it is exact):
# its lens gives no speed verdict from it (code size; one process). Drawn neutral, not amber.
NO_SPEED_VERDICT = "#6e7781"
_LINE_PX = 13.0


def forest_plot(rows: Sequence[ForestRow], *, band: float, width: float = 960) -> str:
    """Ratios with their CIs on a log axis, against 1 and the equivalence band 1 ± band. The
    axis holds the ratios and the informative intervals; wider ones are clipped and marked."""
    value_px, top, bottom = 170.0, 8.0, 34.0
    longest = max((len(r.label) for r in rows), default=0)
    label_px = min(max(longest * _CHAR_PX + 16, 120.0), width * 0.4)
    labels = [wrap_label(r.label, label_px - 8) for r in rows]
    heights = [max(24.0, _LINE_PX * len(lines) + 11) for lines in labels]
    plot_bottom = top + sum(heights)
    height = plot_bottom + bottom
    values = [r.ratio for r in rows]
    values += [v for r in rows if informative(r.ci_low, r.ci_high) for v in (r.ci_low, r.ci_high)]
    low, high = ratio_domain(values, band)
    x = _LogScale(low, high, label_px + 10, width - value_px)
    body = [
        f'<rect x="{_f(x(1 - band))}" y="{_f(top)}" width="{_f(x(1 + band) - x(1 - band))}" '
        f'height="{_f(plot_bottom - top)}" fill="#0a7ea4" fill-opacity="0.12">'
        f"<title>equivalence band {1 - band:.3g} – {1 + band:.3g}</title></rect>",
        *ratio_axis(
            x,
            top,
            plot_bottom,
            "variant / baseline (log scale); shaded: equivalence band; ◆ exact (a count); "
            "▸ interval beyond the axis",
        ),
    ]
    row_top = top
    for i, (row, lines, row_px) in enumerate(zip(rows, labels, heights, strict=True)):
        if i % 2:
            body.append(
                f'<rect x="0" y="{_f(row_top)}" width="{_f(width)}" height="{_f(row_px)}" '
                'fill="#000" fill-opacity="0.03"/>'
            )
        body += _forest_row(row, lines, x, row_top + row_px / 2, label_px)
        row_top += row_px
    return _svg(width, height, body, "forest plot of the ratios with their confidence intervals")


def ratio_axis(x: _LogScale, top: float, plot_bottom: float, caption: str) -> list[str]:
    """A log axis of ratios below the plot: the dashed line at 1, the ticks and the caption."""
    body = [
        f'<line x1="{_f(x(1))}" x2="{_f(x(1))}" y1="{_f(top)}" y2="{_f(plot_bottom)}" '
        'stroke="#444" stroke-dasharray="3,3"/>'
    ]
    for tick in log_ticks(x.low, x.high):
        body.append(
            f'<line x1="{_f(x(tick))}" x2="{_f(x(tick))}" y1="{_f(plot_bottom)}" '
            f'y2="{_f(plot_bottom + 4)}" stroke="#666"/>'
        )
        body.append(_text(x(tick), plot_bottom + 16, format_ratio_tick(tick), anchor="middle"))
    body.append(
        _text(
            (x.start_px + x.end_px) / 2,
            plot_bottom + 30,
            caption,
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    return body


def _forest_row(
    row: ForestRow, lines: Sequence[str], x: _LogScale, y: float, label_px: float
) -> list[str]:
    """A row's label (wrapped, its whole text as a tooltip) and its marks."""
    first_y = y + 4 - _LINE_PX * (len(lines) - 1) / 2
    label = (
        f"<g><title>{escape(row.label)}</title>"
        + "".join(
            _text(label_px, first_y + _LINE_PX * k, line, anchor="end")
            for k, line in enumerate(lines)
        )
        + "</g>"
    )
    return [label, *_forest_marks(row, x, y)]


def _forest_marks(row: ForestRow, x: _LogScale, y: float) -> list[str]:
    colour = VERDICT_COLOURS[row.verdict]
    if row.exact and row.verdict is Verdict.INCONCLUSIVE:
        colour = NO_SPEED_VERDICT
    if not math.isfinite(row.ratio) or row.ratio <= 0:
        return [_text(x.start_px + 4, y + 4, "not estimable", extra=' fill="#888"')]
    marks = []
    # an end beyond the axis (unbounded, or clipped) ends in an arrowhead at the plot's edge
    clipped_low = row.ci_low <= 0 or row.ci_low < x.low
    clipped_high = not math.isfinite(row.ci_high) or row.ci_high > x.high
    left = x(row.ci_low) if not clipped_low else x.start_px
    right = x(row.ci_high) if not clipped_high else x.end_px
    marks.append(
        f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y)}" y2="{_f(y)}" '
        f'stroke="{colour}" stroke-width="2.5"/>'
    )
    if clipped_low:
        marks.append(_arrow(left, y, -1, colour))
    if clipped_high:
        marks.append(_arrow(right, y, 1, colour))
    high = "∞" if not math.isfinite(row.ci_high) else f"{row.ci_high:.3f}"
    title = (
        f"<title>{escape(row.label)}: {row.ratio:.4f} [{row.ci_low:.4f}, {high}] "
        f"{row.verdict.value}{' (exact: no speed verdict)' if colour == NO_SPEED_VERDICT else ''}"
        "</title>"
    )
    cx = x(row.ratio)
    if row.exact:
        marks.append(
            f'<path d="M{_f(cx)},{_f(y - 6)} L{_f(cx + 6)},{_f(y)} L{_f(cx)},{_f(y + 6)} '
            f'L{_f(cx - 6)},{_f(y)} Z" fill="{colour}">{title}</path>'
        )
    else:
        marks.append(f'<circle cx="{_f(cx)}" cy="{_f(y)}" r="5" fill="{colour}">{title}</circle>')
    marks.append(
        _text(
            x.end_px + 12,
            y + 4,
            f"{row.ratio:.3f} [{row.ci_low:.3f}, {high}]",
            extra=f' fill="{colour}" font-variant-numeric="tabular-nums"',
        )
    )
    return marks


def _arrow(tip_x: float, y: float, direction: int, colour: str) -> str:
    back = tip_x - 7 * direction
    return (
        f'<path d="M{_f(tip_x)},{_f(y)} L{_f(back)},{_f(y - 4)} L{_f(back)},{_f(y + 4)} Z" '
        f'fill="{colour}"/>'
    )


# --- a waterfall of ratios -----------------------------------------------------------------

DERIVED_COLOUR = "#555555"  # a bar computed from others (a stack's product of steps)


def style_colour(style: Style) -> str:
    """A verdict style's colour; any other style is a derived value's grey."""
    try:
        return VERDICT_COLOURS[Verdict(style.value)]
    except ValueError:
        return DERIVED_COLOUR


def waterfall(figure: WaterfallFigure, *, width: float = 960) -> str:
    """One row per bar on a log axis of the running product of ratios: the bar from its start
    to its end, its CI as a whisker, its own ratio at the right."""
    value_px, row_px, top, bottom = 190.0, 24.0, 8.0, 34.0
    bars = figure.bars
    # room for the whole of the longest label, within reason
    longest = max((len(bar.label) for bar in bars), default=0)
    label_px = min(max(longest * _CHAR_PX + 16, 160.0), width * 0.4)
    ends = [v for bar in bars for v in (bar.start, bar.end, bar.ci_low, bar.ci_high)]
    low, high = ratio_domain(ends, figure.band)
    x = _LogScale(low, high, label_px, width - value_px)
    plot_bottom = top + row_px * len(bars)
    body = ratio_axis(
        x,
        top,
        plot_bottom,
        "running product of the ratios (log scale); whiskers: each step's 95% CI",
    )
    for i, bar in enumerate(bars):
        body += _waterfall_bar(bar, x, top + row_px * (i + 0.5), label_px, width - value_px)
    label = f"{figure.title}: {figure.summary}" if figure.summary else figure.title
    return _svg(width, plot_bottom + bottom, body, label)


def _waterfall_bar(
    bar: WaterfallBar, x: _LogScale, y: float, label_px: float, value_x: float
) -> list[str]:
    """The bar's label, its bar, its CI's whisker and its ratio at the right."""
    left, right = sorted((x(bar.start), x(bar.end)))
    body = [
        _text(label_px - 8, y + 4, bar.label, anchor="end"),
        f'<rect x="{_f(left)}" y="{_f(y - 7)}" width="{_f(max(right - left, 1.5))}" '
        f'height="14" fill="{style_colour(bar.style)}" fill-opacity="0.75"/>',
    ]
    if math.isfinite(bar.ci_high) and bar.ci_low > 0:
        body.append(
            f'<line x1="{_f(x(bar.ci_low))}" x2="{_f(x(bar.ci_high))}" y1="{_f(y)}" '
            f'y2="{_f(y)}" stroke="#222" stroke-width="1.5"/>'
        )
    body.append(_text(value_x + 8, y + 4, format_ratio(bar.ratio, bar.ratio, bar.ratio)))
    return body


# --- a value per commit ---------------------------------------------------------------------


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
    line = " ".join(f"{_f(layout.x(p.position))},{_f(layout.y(p.value))}" for p in figure.points)
    colour = variant_colour(0)
    body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
    body += [_trend_dot(p, layout, colour) for p in figure.points]
    label = f"{figure.title}: {figure.summary}" if figure.summary else figure.title
    return _svg(width, height, body, label, font_px=font)


def _trend_dot(point: TrendPoint, layout: _TrendLayout, colour: str) -> str:
    dot = (
        f'<circle cx="{_f(layout.x(point.position))}" cy="{_f(layout.y(point.value))}" r="3" '
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
            f'<line x1="{_f(layout.left)}" x2="{_f(layout.right)}" y1="{_f(at_y)}" '
            f'y2="{_f(at_y)}" stroke="#000" stroke-opacity="0.07"/>'
        )
        body.append(_text(layout.left - 6, at_y + 4, text, anchor="end"))
    return body


def _trend_commit_axis(figure: TrendFigure, layout: _TrendLayout, font: float) -> list[str]:
    """The commit axis: the commits named where they fit (a change point's in its colour) and
    what the axis shows."""
    axis_y = layout.bottom
    body = [
        f'<line x1="{_f(layout.left)}" x2="{_f(layout.right)}" y1="{_f(axis_y)}" '
        f'y2="{_f(axis_y)}" stroke="#999"/>'
    ]
    colours = {m.position: style_colour(m.style) for m in figure.marks}
    labels = figure.axis_labels
    for place in axis_label_places(labels, layout.x, list(colours), font):
        at_x = layout.x(place)
        extra = f' fill="{colours[place]}" font-weight="600"' if place in colours else ""
        body.append(
            f'<line x1="{_f(at_x)}" x2="{_f(at_x)}" y1="{_f(axis_y)}" y2="{_f(axis_y + 4)}" '
            'stroke="#666"/>'
        )
        body.append(_text(at_x, axis_y + 17, labels[place], anchor="middle", extra=extra))
    said = "; ".join(
        words
        for words, shown in (("commit ids", labels), ("dashed: change points", figure.marks))
        if shown
    )
    caption = f"{figure.positions} commits, oldest first" + (f" ({said})" if said else "")
    body.append(
        _text(
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
        f'<line x1="{_f(at_x)}" y1="{_f(top)}" x2="{_f(at_x)}" y2="{_f(bottom)}" '
        f'stroke="{style_colour(mark.style)}" stroke-dasharray="4 3" stroke-width="2">'
        f"<title>{escape(mark.label)}</title></line>"
    )
    return f'<a href="{escape(mark.href)}">{line}</a>' if mark.href else line


# --- raw samples over time ------------------------------------------------------------------


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
                f'<rect x="{_f(x(first) - 1.5)}" y="{_f(top)}" '
                f'width="{_f(x(last) - x(first) + 3)}" height="{_f(height - top - bottom)}" '
                f'fill="#000" fill-opacity="0.045"><title>generation {generation}</title></rect>'
            )
    for index, one in enumerate(series):
        panel = _Panel(left, width - right, top + index * (panel_px + gap), panel_px)
        body += _scatter_panel(one, panel, x, format_value)
    axis_y = height - bottom
    for tick in linear_ticks(0, end_s, 8):
        body.append(
            f'<line x1="{_f(x(tick))}" x2="{_f(x(tick))}" y1="{_f(axis_y)}" '
            f'y2="{_f(axis_y + 4)}" stroke="#666"/>'
        )
        body.append(_text(x(tick), axis_y + 15, f"{tick:g} s", anchor="middle"))
    body.append(
        _text(
            left + plot_w / 2,
            axis_y + 30,
            "time since the run started; shaded: alternate worker generations; "
            "hollow: warm-up (not analysed)",
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    return _svg(width, height, body, "per-iteration time of every sample over the run")


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
        f'<rect x="{_f(panel.left)}" y="{_f(panel.top)}" width="{_f(panel.right - panel.left)}" '
        f'height="{_f(panel.height)}" fill="none" stroke="#ccc"/>',
        _text(
            panel.left + 6,
            panel.top + 13,
            one.label,
            extra=f' fill="{one_colour}" font-weight="600"',
        ),
    ]
    for tick in linear_ticks(low, high, 4):
        body.append(
            f'<line x1="{_f(panel.left)}" x2="{_f(panel.right)}" y1="{_f(y(tick))}" '
            f'y2="{_f(y(tick))}" stroke="#000" stroke-opacity="0.07"/>'
        )
        body.append(_text(panel.left - 5, y(tick) + 4, format_value(tick), anchor="end"))
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
            f'<path d="M{_f(cx)},{_f(cy - 1)} l-3.5,6 h7 Z" fill="{colour}">'
            f"<title>{escape(format_value(point.value))} (off scale)</title></path>"
        )
    if point.warmup:
        return (
            f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="2.2" fill="none" '
            f'stroke="{colour}" stroke-opacity="0.6"/>'
        )
    return f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="2.2"/>'


# --- per-generation ratios ------------------------------------------------------------------


def generation_plot(
    series: Sequence[GroupRatios],
    *,
    band: float,
    group_name: str = "generation",
    width: float = 960,
    height: float = 220,
) -> str:
    """Each generation's ratio (the unit the CI is computed over), with the overall ratio dashed
    and its CI shaded: a generation far from the others is a per-process effect."""
    left, right, top, bottom = 78.0, 16.0, 30.0, 36.0
    height += 20  # the legend's row
    groups = sorted({g for s in series for g, _ in s.ratios})
    values = [r for s in series for _, r in s.ratios] + [s.ratio for s in series]
    values += [v for s in series for v in (s.ci_low, s.ci_high) if 0 < v < math.inf]
    low, high = ratio_domain(values, band)
    y_scale = _LogScale(low, high, height - bottom, top)
    n = max(len(groups), 1)
    step = (width - left - right) / n
    position = {g: left + step * (k + 0.5) for k, g in enumerate(groups)}
    body = [
        f'<rect x="{_f(left)}" y="{_f(y_scale(1 + band))}" width="{_f(width - left - right)}" '
        f'height="{_f(y_scale(1 - band) - y_scale(1 + band))}" fill="#0a7ea4" '
        'fill-opacity="0.10"/>',
        f'<line x1="{_f(left)}" x2="{_f(width - right)}" y1="{_f(y_scale(1))}" '
        f'y2="{_f(y_scale(1))}" stroke="#444" stroke-dasharray="3,3"/>',
        f'<rect x="{_f(left)}" y="{_f(top)}" width="{_f(width - left - right)}" '
        f'height="{_f(height - top - bottom)}" fill="none" stroke="#ccc"/>',
    ]
    for tick in log_ticks(low, high, 6):
        body.append(_text(left - 5, y_scale(tick) + 4, format_ratio_tick(tick), anchor="end"))
    label_every = max(1, math.ceil(len(groups) / 24))
    for k, g in enumerate(groups):
        if k % label_every == 0:
            body.append(_text(position[g], height - bottom + 14, str(g), anchor="middle"))
    body.append(
        _text(
            left + (width - left - right) / 2,
            height - 6,
            f"{group_name} (the unit the confidence interval is computed over); "
            "ratio on a log scale",
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    body += _legend(series, left, 14)
    for one in series:
        body += _generation_marks(one, position, y_scale, left, width - right, group_name)
    return _svg(width, height, body, f"ratio per {group_name}, each comparison in its colour")


def _legend(series: Sequence[GroupRatios], left: float, y: float) -> list[str]:
    """What each colour is (the comparison), and what the dashed line and the band are."""
    marks = []
    x = left
    for one in series:
        colour = variant_colour(one.index)
        marks.append(f'<circle cx="{_f(x + 4)}" cy="{_f(y - 4)}" r="4" fill="{colour}"/>')
        marks.append(_text(x + 12, y, one.label))
        x += 12 + len(one.label) * _CHAR_PX + 18
    marks.append(
        _text(x, y, "dashed: the overall ratio; shaded: its interval", extra=' fill="#555"')
    )
    return marks


def _generation_marks(
    one: GroupRatios,
    position: dict[int, float],
    y: _LogScale,
    left: float,
    right: float,
    group_name: str = "generation",
) -> list[str]:
    one_colour = variant_colour(one.index)
    marks = []
    if math.isfinite(one.ratio) and one.ratio > 0:
        if one.ci_low > 0 and math.isfinite(one.ci_high):
            marks.append(
                f'<rect x="{_f(left)}" y="{_f(y(one.ci_high))}" width="{_f(right - left)}" '
                f'height="{_f(max(y(one.ci_low) - y(one.ci_high), 1))}" fill="{one_colour}" '
                'fill-opacity="0.14"/>'
            )
        marks.append(
            f'<line x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y(one.ratio))}" '
            f'y2="{_f(y(one.ratio))}" stroke="{one_colour}" stroke-dasharray="6,3"/>'
        )
    points = [(position[g], y(r)) for g, r in one.ratios if r > 0 and math.isfinite(r)]
    if len(points) > 1:
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
        marks.append(
            f'<polyline points="{path}" fill="none" stroke="{one_colour}" stroke-opacity="0.35"/>'
        )
    for (g, r), (px, py) in zip(
        [(g, r) for g, r in one.ratios if r > 0 and math.isfinite(r)], points, strict=True
    ):
        marks.append(
            f'<circle cx="{_f(px)}" cy="{_f(py)}" r="3.5" fill="{one_colour}">'
            f"<title>{escape(one.label)}, {escape(group_name)} {g}: {r:.4f}</title></circle>"
        )
    return marks


# --- differential flame graph ---------------------------------------------------------------

NEUTRAL = (226, 220, 210)
GROWTH = (214, 64, 50)
SHRINK = (52, 110, 196)


def delta_colour(delta: float, scale: float) -> str:
    """Neutral for no change; redder as a frame's share grows, bluer as it shrinks, saturating
    at `scale` (a change in fractions, 0.05 = 5 percentage points)."""
    strength = min(abs(delta) / scale, 1.0) if scale > 0 else 0.0
    target = GROWTH if delta > 0 else SHRINK
    r, g, b = (round(n + (t - n) * strength) for n, t in zip(NEUTRAL, target, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _max_abs_delta(node: FlameNode) -> float:
    return max([abs(node.delta), *(_max_abs_delta(c) for c in node.children)])


def flame_colour_scale(root: FlameNode, floor: float = 0.02) -> float:
    """Full colour at the largest change, but never for less than `floor` (2 points): an A/A
    profile must not look dramatic because of sampling noise."""
    return max(_max_abs_delta(root), floor)


def visible_depth(node: FlameNode, width: float, min_frame_px: float) -> int:
    """Levels with at least one frame wide enough to draw: narrow deep stacks add no height."""
    if node.variant_share * width < min_frame_px:
        return 0
    return 1 + max((visible_depth(c, width, min_frame_px) for c in node.children), default=0)


def flame_graph(
    root: FlameNode,
    *,
    width: float = 1200,
    frame_px: float = 17,
    min_frame_px: float = 1.0,
    max_depth: int = 80,
) -> str:
    """A differential flame graph: width is the frame's share of the variant's samples, colour
    the change against the baseline. Root at the bottom; hover a frame for its numbers."""
    depth = min(visible_depth(root, width, min_frame_px), max_depth)
    height = depth * frame_px + 4
    scale = flame_colour_scale(root)
    body: list[str] = []

    def draw(node: FlameNode, x0: float, level: int) -> None:
        w = node.variant_share * width
        if w < min_frame_px or level >= depth:
            return
        y = height - (level + 1) * frame_px - 2
        label = node.symbol if not node.object else f"{node.symbol}  ({node.object})"
        tip = (
            f"{label}\nbaseline {node.baseline_share:.2%} → variant {node.variant_share:.2%} "
            f"({node.delta * 100:+.2f} points)"
        )
        body.append(
            f"<g><title>{escape(tip)}</title>"
            f'<rect x="{_f(x0)}" y="{_f(y)}" width="{_f(max(w - 0.5, 0.3))}" '
            f'height="{_f(frame_px - 1)}" rx="1.5" fill="{delta_colour(node.delta, scale)}"/>'
        )
        shown = fit_label(node.symbol, w - 6)
        if shown:
            body.append(_text(x0 + 3, y + frame_px - 5, shown))
        body.append("</g>")
        child_x = x0
        for child in node.children:
            draw(child, child_x, level + 1)
            child_x += child.variant_share * width

    draw(root, 0.0, 0)
    return _svg(width, height, body, "differential flame graph")


def flame_legend(scale: float, width: float = 420) -> str:
    """The colour key of :func:`flame_graph` for a given saturation `scale`."""
    steps = 9
    cell = (width - 120) / steps
    body = []
    for k in range(steps):
        delta = scale * (k - steps // 2) / (steps // 2)
        body.append(
            f'<rect x="{_f(60 + k * cell)}" y="2" width="{_f(cell)}" height="14" '
            f'fill="{delta_colour(delta, scale)}"/>'
        )
    body.append(_text(56, 13, f"−{scale * 100:.1f} pt", anchor="end"))
    body.append(_text(64 + steps * cell, 13, f"+{scale * 100:.1f} pt"))
    return _svg(width, 18, body, "colour key: change of a frame's share")
