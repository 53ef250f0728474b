"""Every lens's report section, from its analysis: the renderers format these and nothing else,
so a lens cannot be missing from a format. A lens's fragments live in `lenses/<metric>/render.py`
(a `section(SectionInput) -> Section` function), found by the metric's name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perflab.document import Section
from perflab.lenses.fragments import SectionInput, verdict_table
from perflab.model import Comparison, Experiment, Metric, Note

SectionBuilder = Callable[[SectionInput], Section]


def section_builder(metric: Metric) -> SectionBuilder:
    module = importlib.import_module(f"perflab.lenses.{metric.value}.render")
    builder: SectionBuilder = module.section
    return builder


def lens_sections(
    experiment: Experiment,
    comparisons: Sequence[Comparison],
    *,
    top_level: Mapping[str, Any],
    variant_info: Mapping[str, Mapping[str, Any]],
    notes: Sequence[Note],
    cross_run: bool,
) -> tuple[Section, ...]:
    """One section per metric that has comparisons, in the experiment's metric order."""
    metrics = list(dict.fromkeys([*experiment.settings.metrics, *(c.metric for c in comparisons)]))
    sections = []
    for metric in metrics:
        mine = tuple(c for c in comparisons if c.metric is metric)
        if not mine:
            continue
        view = SectionInput(
            metric=metric,
            comparisons=mine,
            experiment=experiment,
            top_level=top_level,
            variant_info=variant_info,
            notes=tuple(n for n in notes if n.metric is metric),
            cross_run=cross_run,
        )
        try:
            builder = section_builder(metric)
        except ModuleNotFoundError as error:
            if error.name != f"perflab.lenses.{metric.value}.render":
                raise  # a render module that fails to import is a bug, not a missing section
            # a lens without fragments still shows its verdicts everywhere
            sections.append(
                Section(metric.value, (verdict_table(mine, cross_run=cross_run),), key=metric.value)
            )
            continue
        sections.append(builder(view))
    return tuple(sections)
