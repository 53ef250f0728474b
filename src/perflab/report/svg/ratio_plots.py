"""Plots of ratios against the baseline: the forest plot of every comparison, the waterfall of a
running product of ratios, and the ratio per generation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.records.document import GroupRatios, WaterfallBar, WaterfallFigure
from perflab.records.kinds import Verdict
from perflab.records.units import format_ratio
from perflab.report.escape import html_text as escape
from perflab.report.svg.axes import (
    LogScale,
    format_ratio_tick,
    informative,
    log_ticks,
    ratio_axis,
    ratio_domain,
)
from perflab.report.svg.canvas import (
    CHAR_PX,
    VERDICT_COLOURS,
    coord,
    style_colour,
    svg_document,
    svg_text,
    variant_colour,
    wrap_label,
)

# --- forest plot ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ForestRow:
    """One row of the forest plot: a ratio, its interval and its verdict."""

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
_LINE_PX = 13.0  # line height of a row's label, for the SVG's 11 px text


def forest_plot(rows: Sequence[ForestRow], *, band: float, width: float = 960) -> str:
    """Ratios with their CIs on a log axis, against 1 and the equivalence band 1 ± band. The
    axis holds the ratios and the informative intervals; wider ones are clipped and marked."""
    value_px, top, bottom = 170.0, 8.0, 34.0
    longest = max((len(r.label) for r in rows), default=0)
    label_px = min(max(longest * CHAR_PX + 16, 120.0), width * 0.4)
    labels = [wrap_label(r.label, label_px - 8) for r in rows]
    heights = [max(24.0, _LINE_PX * len(lines) + 11) for lines in labels]
    plot_bottom = top + sum(heights)
    height = plot_bottom + bottom
    values = [r.ratio for r in rows]
    values += [v for r in rows if informative(r.ci_low, r.ci_high) for v in (r.ci_low, r.ci_high)]
    low, high = ratio_domain(values, band)
    x = LogScale(low, high, label_px + 10, width - value_px)
    body = [
        f'<rect x="{coord(x(1 - band))}" y="{coord(top)}" '
        f'width="{coord(x(1 + band) - x(1 - band))}" '
        f'height="{coord(plot_bottom - top)}" fill="#0a7ea4" fill-opacity="0.12">'
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
                f'<rect x="0" y="{coord(row_top)}" width="{coord(width)}" height="{coord(row_px)}" '
                'fill="#000" fill-opacity="0.03"/>'
            )
        body += _forest_row(row, lines, x, row_top + row_px / 2, label_px)
        row_top += row_px
    return svg_document(
        width, height, body, "forest plot of the ratios with their confidence intervals"
    )


def _forest_row(
    row: ForestRow, lines: Sequence[str], x: LogScale, y: float, label_px: float
) -> list[str]:
    """A row's label (wrapped, its whole text as a tooltip) and its marks."""
    first_y = y + 4 - _LINE_PX * (len(lines) - 1) / 2
    label = (
        f"<g><title>{escape(row.label)}</title>"
        + "".join(
            svg_text(label_px, first_y + _LINE_PX * k, line, anchor="end")
            for k, line in enumerate(lines)
        )
        + "</g>"
    )
    return [label, *_forest_marks(row, x, y)]


def _forest_marks(row: ForestRow, x: LogScale, y: float) -> list[str]:
    colour = VERDICT_COLOURS[row.verdict]
    if row.exact and row.verdict is Verdict.INCONCLUSIVE:
        colour = NO_SPEED_VERDICT
    if not math.isfinite(row.ratio) or row.ratio <= 0:
        return [svg_text(x.start_px + 4, y + 4, "not estimable", extra=' fill="#888"')]
    marks = []
    # an end beyond the axis (unbounded, or clipped) ends in an arrowhead at the plot's edge
    clipped_low = row.ci_low <= 0 or row.ci_low < x.low
    clipped_high = not math.isfinite(row.ci_high) or row.ci_high > x.high
    left = x(row.ci_low) if not clipped_low else x.start_px
    right = x(row.ci_high) if not clipped_high else x.end_px
    marks.append(
        f'<line x1="{coord(left)}" x2="{coord(right)}" y1="{coord(y)}" y2="{coord(y)}" '
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
            f'<path d="M{coord(cx)},{coord(y - 6)} L{coord(cx + 6)},{coord(y)} '
            f"L{coord(cx)},{coord(y + 6)} "
            f'L{coord(cx - 6)},{coord(y)} Z" fill="{colour}">{title}</path>'
        )
    else:
        marks.append(
            f'<circle cx="{coord(cx)}" cy="{coord(y)}" r="5" fill="{colour}">{title}</circle>'
        )
    marks.append(
        svg_text(
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
        f'<path d="M{coord(tip_x)},{coord(y)} L{coord(back)},{coord(y - 4)} '
        f'L{coord(back)},{coord(y + 4)} Z" '
        f'fill="{colour}"/>'
    )


# --- a waterfall of ratios -----------------------------------------------------------------


def waterfall(figure: WaterfallFigure, *, width: float = 960) -> str:
    """One row per bar on a log axis of the running product of ratios: the bar from its start
    to its end, its CI as a whisker, its own ratio at the right."""
    value_px, row_px, top, bottom = 190.0, 24.0, 8.0, 34.0
    bars = figure.bars
    # room for the whole of the longest label, within reason
    longest = max((len(bar.label) for bar in bars), default=0)
    label_px = min(max(longest * CHAR_PX + 16, 160.0), width * 0.4)
    ends = [v for bar in bars for v in (bar.start, bar.end, bar.ci_low, bar.ci_high)]
    low, high = ratio_domain(ends, figure.band)
    x = LogScale(low, high, label_px, width - value_px)
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
    return svg_document(width, plot_bottom + bottom, body, label)


def _waterfall_bar(
    bar: WaterfallBar, x: LogScale, y: float, label_px: float, value_x: float
) -> list[str]:
    """The bar's label, its bar, its CI's whisker and its ratio at the right."""
    left, right = sorted((x(bar.start), x(bar.end)))
    body = [
        svg_text(label_px - 8, y + 4, bar.label, anchor="end"),
        f'<rect x="{coord(left)}" y="{coord(y - 7)}" width="{coord(max(right - left, 1.5))}" '
        f'height="14" fill="{style_colour(bar.style)}" fill-opacity="0.75"/>',
    ]
    if math.isfinite(bar.ci_high) and bar.ci_low > 0:
        body.append(
            f'<line x1="{coord(x(bar.ci_low))}" x2="{coord(x(bar.ci_high))}" y1="{coord(y)}" '
            f'y2="{coord(y)}" stroke="#222" stroke-width="1.5"/>'
        )
    body.append(svg_text(value_x + 8, y + 4, format_ratio(bar.ratio, bar.ratio, bar.ratio)))
    return body


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
    left, right, top, bottom = 78.0, width - 16.0, 30.0, height + 20 - 36.0  # 20: the legend
    groups = sorted({g for s in series for g, _ in s.ratios})
    values = [r for s in series for _, r in s.ratios] + [s.ratio for s in series]
    values += [v for s in series for v in (s.ci_low, s.ci_high) if 0 < v < math.inf]
    low, high = ratio_domain(values, band)
    y_scale = LogScale(low, high, bottom, top)
    step = (right - left) / max(len(groups), 1)
    position = {g: left + step * (k + 0.5) for k, g in enumerate(groups)}
    body = _generation_axes(y_scale, position, left=left, right=right, band=band)
    body.append(
        svg_text(
            (left + right) / 2,
            bottom + 30,
            f"{group_name} (the unit the confidence interval is computed over); "
            "ratio on a log scale",
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    body += _legend(series, left, 14)
    for one in series:
        body += _generation_marks(one, position, y_scale, left, right, group_name)
    return svg_document(
        width, bottom + 36, body, f"ratio per {group_name}, each comparison in its colour"
    )


def _generation_axes(
    y: LogScale, position: dict[int, float], *, left: float, right: float, band: float
) -> list[str]:
    """The plot's frame, the equivalence band, the dashed line at 1, the ratio ticks and the
    groups' labels (as many as fit, about 24)."""
    top, bottom = y.end_px, y.start_px
    axes = [
        f'<rect x="{coord(left)}" y="{coord(y(1 + band))}" width="{coord(right - left)}" '
        f'height="{coord(y(1 - band) - y(1 + band))}" fill="#0a7ea4" fill-opacity="0.10"/>',
        f'<line x1="{coord(left)}" x2="{coord(right)}" y1="{coord(y(1))}" '
        f'y2="{coord(y(1))}" stroke="#444" stroke-dasharray="3,3"/>',
        f'<rect x="{coord(left)}" y="{coord(top)}" width="{coord(right - left)}" '
        f'height="{coord(bottom - top)}" fill="none" stroke="#ccc"/>',
    ]
    for tick in log_ticks(y.low, y.high, 6):
        axes.append(svg_text(left - 5, y(tick) + 4, format_ratio_tick(tick), anchor="end"))
    label_every = max(1, math.ceil(len(position) / 24))
    for k, (g, at_x) in enumerate(position.items()):
        if k % label_every == 0:
            axes.append(svg_text(at_x, bottom + 14, str(g), anchor="middle"))
    return axes


def _legend(series: Sequence[GroupRatios], left: float, y: float) -> list[str]:
    """What each colour is (the comparison), and what the dashed line and the band are."""
    marks = []
    x = left
    for one in series:
        colour = variant_colour(one.index)
        marks.append(f'<circle cx="{coord(x + 4)}" cy="{coord(y - 4)}" r="4" fill="{colour}"/>')
        marks.append(svg_text(x + 12, y, one.label))
        x += 12 + len(one.label) * CHAR_PX + 18
    marks.append(
        svg_text(x, y, "dashed: the overall ratio; shaded: its interval", extra=' fill="#555"')
    )
    return marks


def _generation_marks(
    one: GroupRatios,
    position: dict[int, float],
    y: LogScale,
    left: float,
    right: float,
    group_name: str = "generation",
) -> list[str]:
    one_colour = variant_colour(one.index)
    marks = []
    if math.isfinite(one.ratio) and one.ratio > 0:
        if one.ci_low > 0 and math.isfinite(one.ci_high):
            marks.append(
                f'<rect x="{coord(left)}" y="{coord(y(one.ci_high))}" '
                f'width="{coord(right - left)}" '
                f'height="{coord(max(y(one.ci_low) - y(one.ci_high), 1))}" fill="{one_colour}" '
                'fill-opacity="0.14"/>'
            )
        marks.append(
            f'<line x1="{coord(left)}" x2="{coord(right)}" y1="{coord(y(one.ratio))}" '
            f'y2="{coord(y(one.ratio))}" stroke="{one_colour}" stroke-dasharray="6,3"/>'
        )
    points = [(position[g], y(r)) for g, r in one.ratios if r > 0 and math.isfinite(r)]
    if len(points) > 1:
        path = " ".join(f"{coord(px)},{coord(py)}" for px, py in points)
        marks.append(
            f'<polyline points="{path}" fill="none" stroke="{one_colour}" stroke-opacity="0.35"/>'
        )
    for (g, r), (px, py) in zip(
        [(g, r) for g, r in one.ratios if r > 0 and math.isfinite(r)], points, strict=True
    ):
        marks.append(
            f'<circle cx="{coord(px)}" cy="{coord(py)}" r="3.5" fill="{one_colour}">'
            f"<title>{escape(one.label)}, {escape(group_name)} {g}: {r:.4f}</title></circle>"
        )
    return marks
