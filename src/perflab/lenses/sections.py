"""Every lens's report section, from its analysis: the renderers format these and nothing else,
so a lens cannot be missing from a format. A lens's fragments live in `lenses/<lens>/render.py`
(a `section(SectionInput) -> Section` function), named by its descriptor's `render`."""

from __future__ import annotations

from collections.abc import Callable

from perflab.lenses.fragments import SectionInput, measurement_table, verdict_table
from perflab.lenses.registry import descriptor_for
from perflab.records.document import ScatterFigure, Section
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.results import RunResult

SectionBuilder = Callable[[SectionInput], Section]
ALONE_EXPLANATION = (
    "Every sample's time per iteration, in measurement order (the scale does not start at zero). "
    "Drift shows as a slope, bimodality as two bands, a per-process effect as a step at a "
    "generation boundary."
)


def section_builder(metric: Metric) -> SectionBuilder | None:
    """The lens's section builder (its render module loads now), or None: a lens without one,
    or a metric no registered lens measures (a stored run of another perflab version)."""
    try:
        descriptor = descriptor_for(metric)
    except ConfigError:
        return None
    builder: SectionBuilder | None = descriptor.renderer()
    return builder


def lens_sections(result: RunResult) -> tuple[Section, ...]:
    """One section per metric that has comparisons, in the experiment's metric order; a metric
    with only variants measured alone (no baseline) shows their own figures."""
    experiment, comparisons, cross_run = result.experiment, result.comparisons, result.cross_run
    metrics = list(dict.fromkeys([*experiment.settings.metrics, *(c.metric for c in comparisons)]))
    sections = []
    for metric in metrics:
        mine = tuple(c for c in comparisons if c.metric is metric)
        alone = [m for m in result.measurements if m.metric is metric]
        if not mine and alone and len(experiment.variants) == 1:
            plots = tuple(
                Section(
                    m.benchmark,
                    (ScatterFigure("raw samples", (m.series,), explanation=ALONE_EXPLANATION),),
                )
                for m in alone
                if m.series is not None and not cross_run
            )
            table = measurement_table(alone)
            sections.append(Section(metric.value, (table,), plots, key=metric.value))
            continue
        if not mine:
            continue
        view = SectionInput(
            metric=metric,
            comparisons=mine,
            experiment=experiment,
            findings=result.findings,
            variant_info=result.variant_info,
            notes=tuple(n for n in result.notes if n.metric is metric),
            cross_run=cross_run,
        )
        builder = section_builder(metric)
        if builder is None:
            # a lens without fragments still shows its verdicts everywhere
            sections.append(
                Section(metric.value, (verdict_table(mine, cross_run=cross_run),), key=metric.value)
            )
            continue
        sections.append(builder(view))
    return tuple(sections)
