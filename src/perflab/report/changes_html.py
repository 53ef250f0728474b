"""HTML for stacks and matrices: a stack as a waterfall (each step's ratio with its CI,
starting where the previous step ended, down to the whole range), a matrix as a grid of each
change's ratio on each base, with its interaction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from perflab.records.model import Comparison, Verdict
from perflab.records.results import Interaction, InteractionVerdict, RunResult, StackSummary
from perflab.report.units import format_ratio

if TYPE_CHECKING:
    from perflab.report.svg import _LogScale

# the verdict colours of report/svg.py (imported lazily: svg.py still reaches a lens)
VERDICT_COLOURS = {
    Verdict.FASTER: "#1a7f37",
    Verdict.SLOWER: "#cf222e",
    Verdict.EQUIVALENT: "#0a7ea4",
    Verdict.INCONCLUSIVE: "#b7791f",
    Verdict.INVALID: "#8250df",
}
_INTERACTION_COLOURS = {
    InteractionVerdict.NONE: VERDICT_COLOURS[Verdict.EQUIVALENT],
    InteractionVerdict.BETTER_ON_BASE: VERDICT_COLOURS[Verdict.FASTER],
    InteractionVerdict.WORSE_ON_BASE: VERDICT_COLOURS[Verdict.SLOWER],
    InteractionVerdict.INCONCLUSIVE: VERDICT_COLOURS[Verdict.INCONCLUSIVE],
}


# a waterfall row: label, start, end, CI low, CI high (on the running product's scale), colour
_WaterfallRow = tuple[str, float, float, float, float, str]


def waterfall_svg(summary: StackSummary, *, band: float, width: float = 960) -> str:
    """One row per step: a bar from the running product before it to the running product
    after it (log axis), the step's CI as a whisker at its end; then the product of the steps
    and the whole range, both from 1."""
    from perflab.report.svg import _CHAR_PX, _LogScale, _svg, ratio_axis, ratio_domain

    value_px, row_px, top, bottom = 190.0, 24.0, 8.0, 34.0
    rows = _waterfall_rows(summary)
    # room for the whole of the longest label, within reason
    longest = max(len(r[0]) for r in rows)
    label_px = min(max(longest * _CHAR_PX + 16, 160.0), width * 0.4)
    values = [v for r in rows for v in r[1:5] if math.isfinite(v) and v > 0]
    low, high = ratio_domain(values, band)
    x = _LogScale(low, high, label_px, width - value_px)
    plot_bottom = top + row_px * len(rows)
    body = ratio_axis(
        x,
        top,
        plot_bottom,
        "running product of the ratios (log scale); whiskers: each step's 95% CI",
    )
    for i, row in enumerate(rows):
        body += _waterfall_bar(row, x, top + row_px * (i + 0.5), label_px, width - value_px)
    if summary.consistent:
        verdict = "the steps multiply up to the whole (their CIs overlap)"
    else:
        verdict = "the steps do NOT multiply up to the whole: the changes interact"
    height = plot_bottom + bottom
    label = f"stack waterfall, {summary.benchmark} {summary.metric.value}: {verdict}"
    return _svg(width, height, body, label)


def _waterfall_rows(summary: StackSummary) -> list[_WaterfallRow]:
    """Each step from the running product before it; then the product and the whole, from 1."""
    rows: list[_WaterfallRow] = []
    running = 1.0
    for step in summary.steps:
        start, end = running, running * step.ratio
        label = f"{step.variant} vs {step.baseline}"
        colour = VERDICT_COLOURS[step.verdict]
        rows.append((label, start, end, start * step.ci_low, start * step.ci_high, colour))
        running = end
    product = summary.product
    rows.append(
        ("steps multiplied", 1.0, product.ratio, product.ci_low, product.ci_high, "#555555")
    )
    whole = summary.whole
    rows.append(
        (
            f"whole: {whole.variant} vs {whole.baseline}",
            1.0,
            whole.ratio,
            whole.ci_low,
            whole.ci_high,
            VERDICT_COLOURS[whole.verdict],
        )
    )
    return rows


def _waterfall_bar(
    row: _WaterfallRow, x: _LogScale, y: float, label_px: float, value_x: float
) -> list[str]:
    """The row's label, its bar, its CI's whisker and its ratio at the right."""
    from perflab.report.svg import _f, _text

    label, start, end, lo, hi, colour = row
    left, right = sorted((x(start), x(end)))
    body = [
        _text(label_px - 8, y + 4, label, anchor="end"),
        f'<rect x="{_f(left)}" y="{_f(y - 7)}" width="{_f(max(right - left, 1.5))}" '
        f'height="14" fill="{colour}" fill-opacity="0.75"/>',
    ]
    if math.isfinite(hi) and lo > 0:
        body.append(
            f'<line x1="{_f(x(lo))}" x2="{_f(x(hi))}" y1="{_f(y)}" y2="{_f(y)}" '
            'stroke="#222" stroke-width="1.5"/>'
        )
    ratio = end / start if start else math.nan
    body.append(_text(value_x + 8, y + 4, format_ratio(ratio, ratio, ratio)))
    return body


def _cell(c: Comparison | None) -> str:
    if c is None:
        return '<td class="missing">not measured</td>'
    return _ratio_cell(c.ratio, c.ci_low, c.ci_high, c.verdict.value, VERDICT_COLOURS[c.verdict])


def _interaction_cell(i: Interaction | None) -> str:
    if i is None:
        return "<td></td>"
    colour = _INTERACTION_COLOURS[i.verdict]
    return _ratio_cell(i.ratio, i.ci_low, i.ci_high, i.verdict.value, colour)


def _ratio_cell(ratio: float, ci_low: float, ci_high: float, verdict: str, colour: str) -> str:
    return (
        f"<td><b>{escape(format_ratio(ratio, ci_low, ci_high))}</b> "
        f'<span style="color:{colour}">{escape(verdict)}</span></td>'
    )


def matrix_grids(result: RunResult) -> str:
    """One table per benchmark, metric and event: a row per change, a column per base (the
    change's ratio on that base) and per other base (the interaction with the first base)."""
    experiment = result.experiment
    cells: dict[tuple[str, str], str] = {}  # (change, base) -> variant
    bases: list[str] = []
    changes: list[str] = []
    for base, cell in experiment.pairs:
        change, _, on = cell.rpartition("@")
        if on != base or not change:
            return ""  # not a matrix
        cells[(change, base)] = cell
        bases += [base] if base not in bases else []
        changes += [change] if change not in changes else []
    keys = dict.fromkeys((c.benchmark, c.metric, c.event) for c in result.comparisons)
    index = {
        (c.baseline, c.variant, (c.benchmark, c.metric, c.event)): c for c in result.comparisons
    }
    interactions = {
        (i.change, i.base, (i.benchmark, i.metric, i.event)): i for i in result.interactions
    }
    parts = []
    for key in keys:
        title = f"{key[0]}, {key[1].value}" + (f" {key[2]}" if key[2] else "")
        head = "".join(f"<th>on {escape(b)}</th>" for b in bases)
        head += "".join(f"<th>interaction {escape(b)} / {escape(bases[0])}</th>" for b in bases[1:])
        rows = []
        for change in changes:
            row = [f"<th>{escape(change)}</th>"]
            row += [_cell(index.get((b, cells.get((change, b), ""), key))) for b in bases]
            row += [_interaction_cell(interactions.get((change, b, key))) for b in bases[1:]]
            rows.append("<tr>" + "".join(row) + "</tr>")
        parts.append(
            f"<h3>{escape(title)}</h3><table><thead><tr><th>change</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return "".join(parts)


def change_sections(result: RunResult) -> str:
    """The HTML the report adds for a stack or a matrix (empty otherwise)."""
    band = result.experiment.settings.equivalence_band
    parts: list[str] = []
    if result.stacks:
        parts.append(
            '<h2>Stack</h2><p class="explain">Each step is measured against its predecessor; '
            "bars start where the previous step ended, so they add up (in log space) to the "
            "product of the steps, shown with the whole range measured directly.</p>"
        )
        for summary in result.stacks:
            title = f"{summary.benchmark}, {summary.metric.value}" + (
                f" {summary.event}" if summary.event else ""
            )
            parts.append(f"<h3>{escape(title)}</h3>")
            parts.append(f'<div class="scroll">{waterfall_svg(summary, band=band)}</div>')
    grids = matrix_grids(result) if result.experiment.interactions or _is_matrix(result) else ""
    if grids:
        parts.append(
            '<h2>Matrix</h2><p class="explain">Each change\'s ratio on each base (against that '
            "base), and its interaction: its ratio on a base over its ratio on the first base. "
            "An interaction CI inside the equivalence band means the change does the same on "
            "both bases.</p>" + grids
        )
    return "".join(parts)


def _is_matrix(result: RunResult) -> bool:
    return bool(result.experiment.pairs) and all(
        "@" in variant for _, variant in result.experiment.pairs
    )


__all__: Sequence[str] = ("change_sections", "matrix_grids", "waterfall_svg")
