"""The time lens's section: verdicts, every variant's raw samples over time and the ratio of
every generation (or batch) -- the values its confidence interval is computed over."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from perflab.lenses.fragments import SectionInput, details_json, plural, verdict_table
from perflab.records.document import GroupRatios, RatiosFigure, ScatterFigure, Section, TimeSeries
from perflab.records.model import Comparison

# how the per-variant columns treat preempted samples, by --preempted policy
_PREEMPTED_WORDS = {
    "correct": "preempted time taken out",
    "exclude": "pairs with a preempted sample left out",
    "keep": "as measured",
}

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
    """The time lens's report section: per benchmark the raw samples over time and the per-group
    ratios."""
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
    table = replace(table, caption=caption(view.comparisons, view.experiment.settings.confidence))
    return Section("time", (table,), tuple(subsections), key="time")


def _estimator_words(estimator: str, group: str) -> str:
    """The JSON's `value_estimator` in a sentence (stats.variant_values)."""
    suffix = " of group medians"
    if not estimator.endswith(suffix):
        return estimator  # e.g. "median as measured": every pair was left out
    mean = estimator.removesuffix(suffix)
    return (
        f"the geometric {mean} of the {plural(group, 2)}' medians (the ratio's: of the pairs' "
        "variant/baseline)"
    )


def caption(comparisons: Sequence[Comparison], confidence: float) -> str:
    """What the columns are (the ratio's samples and estimator), and, where several
    comparisons are decided together, the level of each interval."""
    details = [details_json(c) for c in comparisons]
    policies = {d.get("value_preempted") for d in details} - {None}
    groups = {str(d.get("group", "generation")) for d in details}
    estimators = {str(d.get("value_estimator", "")) for d in details}
    parts = []
    if len(policies) == 1 and len(groups) == 1 and len(estimators) == 1:
        (policy,) = policies
        (group,) = groups
        (estimator,) = estimators
        parts.append(
            "baseline, variant, ratio: one estimator over the samples the ratio uses "
            f"({_PREEMPTED_WORDS.get(str(policy), policy)}), "
            f"{_estimator_words(estimator, group)}, ± MAD"
        )
    families = {
        (d.get("family_size"), d.get("confidence"))
        for d in details
        if isinstance(d.get("family_size"), int) and d["family_size"] > 1
    }
    if len(families) == 1:
        ((size, level),) = families
        parts.append(
            f"the {size} comparisons' intervals hold together (each at {level:.2%}): identical "
            f"code gets no claim from any of them {confidence:.0%} of the time"
        )
    return "; ".join(parts)
