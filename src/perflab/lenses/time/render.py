"""The time lens's section: verdicts, every variant's raw samples over time and the ratio of
every generation (or batch) -- the values its confidence interval is computed over."""

from __future__ import annotations

from perflab.document import GroupRatios, RatiosFigure, ScatterFigure, Section, TimeSeries
from perflab.lenses.fragments import SectionInput, verdict_table
from perflab.model import Comparison

SCATTER_EXPLANATION = (
    "Every sample's time per iteration, in measurement order, one panel per variant (each panel "
    "has its own scale, which does not start at zero). Drift shows as a slope, bimodality as two "
    "bands, a per-process effect as a step at a generation boundary."
)


# read by attribute (TimeDetails has them): records built elsewhere may carry the same fields
def _series(comparison: Comparison) -> tuple[TimeSeries, ...]:
    series = getattr(comparison.details, "series", ())
    return tuple(s for s in series if isinstance(s, TimeSeries))


def _ratios(comparison: Comparison) -> tuple[tuple[int, float], ...]:
    return tuple(getattr(comparison.details, "group_ratios", ()))


def section(view: SectionInput) -> Section:
    band = view.experiment.settings.equivalence_band
    subsections = []
    for benchmark in dict.fromkeys(c.benchmark for c in view.comparisons):
        blocks: list[ScatterFigure | RatiosFigure] = []
        group = [c for c in view.comparisons if c.benchmark == benchmark]
        series = next((_series(c) for c in group if _series(c)), ())
        # two stored runs were measured apart: their sample times share no clock
        if series and not view.cross_run:
            blocks.append(ScatterFigure("raw samples", series, explanation=SCATTER_EXPLANATION))
        ratios = tuple(
            GroupRatios(f"{c.variant} vs {c.baseline}", k, _ratios(c), c.ratio, c.ci_low, c.ci_high)
            for k, c in enumerate(group, start=1)
            if _ratios(c)
        )
        if ratios:
            group_name = str(getattr(group[0].details, "group_name", "generation"))
            blocks.append(
                RatiosFigure(
                    f"per-{group_name} ratios",
                    ratios,
                    band=band,
                    group_name=group_name,
                    explanation=f"Per-{group_name} ratios: the values the confidence interval is "
                    "computed over. Dashed: the overall ratio; shaded in the variant's colour: "
                    "its CI.",
                )
            )
        if blocks:
            subsections.append(Section(benchmark, tuple(blocks)))
    table = verdict_table(view.comparisons, cross_run=view.cross_run)
    return Section("time", (table,), tuple(subsections), key="time")
