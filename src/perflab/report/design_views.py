"""Stacks and matrices as report sections, built once from their analysis
(:mod:`perflab.analyse.design_analysis`) for every format: the terminal, Markdown and HTML
renderers lay these out as they do a lens's section.

A stack's section: a table of whether each stack's steps multiply up to its whole range, then
per benchmark and metric its steps and their waterfall. A matrix's section: a table of each
change's interaction between bases, then per benchmark and metric a grid of each change's ratio
on each base."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.records.document import (
    Cell,
    Paragraph,
    Section,
    Style,
    Table,
    WaterfallBar,
    WaterfallFigure,
)
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison, Experiment
from perflab.records.results import Interaction, InteractionVerdict, RunResult, StackSummary
from perflab.records.units import format_ratio

INTERACTION_STYLES = {
    InteractionVerdict.NONE: Style.EQUIVALENT,
    InteractionVerdict.BETTER_ON_BASE: Style.FASTER,
    InteractionVerdict.WORSE_ON_BASE: Style.SLOWER,
    InteractionVerdict.INCONCLUSIVE: Style.INCONCLUSIVE,
}
WATERFALL_EXPLANATION = (
    "Each step is measured against its predecessor; bars start where the previous step ended, "
    "so they add up (in log space) to the product of the steps, shown with the whole range "
    "measured directly."
)
MATRIX_EXPLANATION = (
    "Each change's ratio on each base (against that base), and its interaction: its ratio on a "
    "base over its ratio on the first base. An interaction CI inside the equivalence band means "
    "the change does the same on both bases."
)

_Key = tuple[str, Metric, str | None]  # benchmark, metric, event


def design_sections(result: RunResult) -> tuple[Section, ...]:
    """The stack's and the matrix's sections of a run (none for a plain comparison)."""
    band = result.experiment.settings.equivalence_band
    found = (stack_section(result.stacks, band=band), matrix_section(result))
    return tuple(section for section in found if section is not None)


def _verdict_style(verdict: Verdict) -> Style:
    """A verdict cell's style: document.Style names each verdict by the verdict's own value."""
    return Style(verdict.value)


def _what(key: _Key) -> str:
    benchmark, metric, event = key
    return f"{benchmark}, {metric.value}" + (f" {event}" if event else "")


def _metric_text(metric: Metric, event: str | None) -> str:
    return metric.value + (f" {event}" if event else "")


# --- stacks ---------------------------------------------------------------------------------


def _adds_up(summary: StackSummary) -> Cell:
    if summary.consistent:
        return Cell("adds up to the whole", Style.EQUIVALENT)
    return Cell("does NOT add up to the whole", Style.INCONCLUSIVE)


def stack_section(stacks: Sequence[StackSummary], *, band: float) -> Section | None:
    """Each stack's product of steps against its whole range, then its steps and waterfall."""
    if not stacks:
        return None
    rows = tuple(
        (
            Cell(s.benchmark),
            Cell(_metric_text(s.metric, s.event)),
            Cell(format_ratio(s.product.ratio, s.product.ci_low, s.product.ci_high)),
            Cell(format_ratio(s.whole.ratio, s.whole.ci_low, s.whole.ci_high)),
            _adds_up(s),
        )
        for s in stacks
    )
    overview = Table(
        ("benchmark", "metric", "steps multiplied [95% CI]", "whole range [95% CI]", "verdict"),
        rows,
        numeric=(False, False, True, True, False),
    )
    subsections = tuple(
        Section(
            _what((s.benchmark, s.metric, s.event)),
            (stack_steps_table(s), waterfall_figure(s, band=band)),
        )
        for s in stacks
    )
    return Section("stack", (overview,), subsections, key="stack")


def _step_row(c: Comparison, label: str) -> tuple[Cell, ...]:
    return (
        Cell(label),
        Cell(format_ratio(c.ratio, c.ci_low, c.ci_high)),
        Cell(c.verdict.value, _verdict_style(c.verdict)),
    )


def stack_steps_table(summary: StackSummary) -> Table:
    """Each step against its predecessor, the whole range, and the steps multiplied."""
    rows = [_step_row(step, f"{step.variant} vs {step.baseline}") for step in summary.steps]
    whole = summary.whole
    rows.append(_step_row(whole, f"whole: {whole.variant} vs {whole.baseline}"))
    product = summary.product
    rows.append(
        (
            Cell("steps multiplied"),
            Cell(format_ratio(product.ratio, product.ci_low, product.ci_high)),
            _adds_up(summary),
        )
    )
    return Table(("step", "ratio [95% CI]", "verdict"), tuple(rows), numeric=(False, True, False))


def _bar(
    label: str, start: float, ratio: float, ci: tuple[float, float], style: Style
) -> WaterfallBar:
    """A bar for a ratio and its CI, scaled to begin at `start` on the running product."""
    low, high = ci
    return WaterfallBar(
        label=label,
        start=start,
        end=start * ratio,
        ci_low=start * low,
        ci_high=start * high,
        ratio=ratio,
        style=style,
    )


def waterfall_figure(summary: StackSummary, *, band: float) -> WaterfallFigure:
    """Each step from the running product before it; then the product and the whole, from 1."""
    bars: list[WaterfallBar] = []
    running = 1.0
    for step in summary.steps:
        label = f"{step.variant} vs {step.baseline}"
        bars.append(
            _bar(
                label,
                running,
                step.ratio,
                (step.ci_low, step.ci_high),
                _verdict_style(step.verdict),
            )
        )
        running = bars[-1].end
    product, whole = summary.product, summary.whole
    product_ci = (product.ci_low, product.ci_high)
    bars.append(_bar("steps multiplied", 1.0, product.ratio, product_ci, Style.MUTED))
    label = f"whole: {whole.variant} vs {whole.baseline}"
    bars.append(
        _bar(label, 1.0, whole.ratio, (whole.ci_low, whole.ci_high), _verdict_style(whole.verdict))
    )
    if summary.consistent:
        verdict = "the steps multiply up to the whole (their CIs overlap)"
    else:
        verdict = "the steps do NOT multiply up to the whole: the changes interact"
    what = _what((summary.benchmark, summary.metric, summary.event))
    return WaterfallFigure(
        "waterfall of the steps",
        tuple(bars),
        band,
        summary=f"{what}: {verdict}",
        explanation=WATERFALL_EXPLANATION,
    )


# --- matrices -------------------------------------------------------------------------------


def matrix_section(result: RunResult) -> Section | None:
    """Each interaction, then per benchmark and metric the grid of changes on bases."""
    grids = matrix_grids(result.experiment, result.comparisons, result.interactions)
    if not result.interactions and not grids:
        return None
    blocks: list[Table | Paragraph] = []
    if result.interactions:
        blocks.append(interactions_table(result.interactions))
    if grids:
        blocks.append(Paragraph(MATRIX_EXPLANATION))
    return Section("matrix", tuple(blocks), grids, key="matrix")


def _on(base: str, c: Comparison) -> Cell:
    ratio = format_ratio(c.ratio, c.ratio, c.ratio)
    return Cell(f"{base}: {ratio} {c.verdict.value}", _verdict_style(c.verdict))


def interactions_table(interactions: Sequence[Interaction]) -> Table:
    """A change's ratio on a base over its ratio on the reference base."""
    rows = tuple(
        (
            Cell(i.benchmark),
            Cell(_metric_text(i.metric, i.event)),
            Cell(i.change),
            _on(i.base, i.on_base),
            _on(i.reference_base, i.on_reference),
            Cell(format_ratio(i.ratio, i.ci_low, i.ci_high)),
            Cell(i.verdict.value, INTERACTION_STYLES[i.verdict]),
        )
        for i in interactions
    )
    columns = ("benchmark", "metric", "change", "on base", "on reference")
    return Table(
        (*columns, "interaction [95% CI]", "verdict"),
        rows,
        numeric=(False,) * 5 + (True, False),
        caption="interaction: a change's ratio on base / its ratio on the reference base",
    )


def _cells_of(experiment: Experiment) -> tuple[dict[tuple[str, str], str], list[str], list[str]]:
    """The variant of each (change, base), the bases and the changes in the plan's order;
    empty when a pair is not a change on its base (`change@base` against `base`): no matrix."""
    cells: dict[tuple[str, str], str] = {}
    bases: list[str] = []
    changes: list[str] = []
    for base, cell in experiment.pairs:
        change, _, on = cell.rpartition("@")
        if on != base or not change:
            return {}, [], []
        cells[(change, base)] = cell
        bases += [base] if base not in bases else []
        changes += [change] if change not in changes else []
    return cells, bases, changes


def _comparison_cell(c: Comparison | None) -> Cell:
    if c is None:
        return Cell("not measured", Style.MUTED)
    text = f"{format_ratio(c.ratio, c.ci_low, c.ci_high)} {c.verdict.value}"
    return Cell(text, _verdict_style(c.verdict))


def _interaction_cell(i: Interaction | None) -> Cell:
    if i is None:
        return Cell("")
    text = f"{format_ratio(i.ratio, i.ci_low, i.ci_high)} {i.verdict.value}"
    return Cell(text, INTERACTION_STYLES[i.verdict])


def matrix_grids(
    experiment: Experiment,
    comparisons: Sequence[Comparison],
    interactions: Sequence[Interaction],
) -> tuple[Section, ...]:
    """One grid per benchmark, metric and event: a row per change, a column per base (the
    change's ratio on that base) and per other base (the interaction with the first base)."""
    cells, bases, changes = _cells_of(experiment)
    if not cells:
        return ()
    index = {(c.baseline, c.variant, (c.benchmark, c.metric, c.event)): c for c in comparisons}
    by_change = {(i.change, i.base, (i.benchmark, i.metric, i.event)): i for i in interactions}
    columns = (
        "change",
        *(f"on {b}" for b in bases),
        *(f"interaction {b} / {bases[0]}" for b in bases[1:]),
    )
    grids = []
    for key in dict.fromkeys((c.benchmark, c.metric, c.event) for c in comparisons):
        rows = tuple(
            (
                Cell(change),
                *(_comparison_cell(index.get((b, cells.get((change, b), ""), key))) for b in bases),
                *(_interaction_cell(by_change.get((change, b, key))) for b in bases[1:]),
            )
            for change in changes
        )
        grids.append(Section(_what(key), (Table(columns, rows),)))
    return tuple(grids)
