"""Stacks and matrices from a run's comparisons: whether a stack's steps multiply up to the
whole range, and each change's interaction between bases (paired unit by unit from the stored
samples where the lens says how: `Figures.paired_units`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from perflab.lenses.registry import descriptor_for
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, BenchmarkData, Comparison, Experiment, InteractionSpec
from perflab.records.results import Interaction, InteractionVerdict, Interval, StackSummary
from perflab.stats.family import family_settings
from perflab.stats.interaction import (
    interaction_from_intervals,
    interaction_verdict,
    intervals_overlap,
    paired_interaction,
    product_of_steps,
)
from perflab.stats.preemption import Preemption


def _interval(c: Comparison) -> Interval:
    return Interval(c.ratio, c.ci_low, c.ci_high)


_Key = tuple[str, Metric, str | None]


def _index(comparisons: Sequence[Comparison]) -> dict[tuple[str, str, _Key], Comparison]:
    return {(c.baseline, c.variant, (c.benchmark, c.metric, c.event)): c for c in comparisons}


def stack_summaries(
    experiment: Experiment, comparisons: Sequence[Comparison]
) -> tuple[StackSummary, ...]:
    """Each benchmark's stack (`experiment.stack`): its steps' ratios multiplied up, set against the
    whole's measured ratio; none where a step is missing."""
    names = experiment.stack
    if len(names) < 2:
        return ()
    index = _index(comparisons)
    keys = dict.fromkeys((c.benchmark, c.metric, c.event) for c in comparisons)
    summaries = []
    for key in keys:
        steps = [index.get((a, b, key)) for a, b in zip(names, names[1:], strict=False)]
        whole = index.get((names[0], names[-1], key))
        if whole is None or any(s is None for s in steps):
            continue  # a step failed to build or measure: nothing to multiply up
        found = [s for s in steps if s is not None]
        product = product_of_steps([_interval(s) for s in found])
        summaries.append(
            StackSummary(
                benchmark=key[0],
                metric=key[1],
                event=key[2],
                steps=tuple(found),
                whole=whole,
                product=product,
                consistent=intervals_overlap(product, _interval(whole)),
            )
        )
    return tuple(summaries)


def interactions_of(
    experiment: Experiment,
    comparisons: Sequence[Comparison],
    data_of: Mapping[tuple[str, Metric], BenchmarkData],
) -> tuple[Interaction, ...]:
    """Every interaction the plan names, for every benchmark/metric/event with both cells."""
    if not experiment.interactions:
        return ()
    index = _index(comparisons)
    benchmarks = {b.name: b for b in experiment.benchmarks}
    keys = dict.fromkeys((c.benchmark, c.metric, c.event) for c in comparisons)
    band = experiment.settings.equivalence_band
    found = []
    for spec in experiment.interactions:
        for key in keys:
            on_base = index.get((spec.base, spec.on_base, key))
            on_reference = index.get((spec.reference_base, spec.on_reference, key))
            if on_base is None or on_reference is None:
                continue
            interval, paired = None, False
            data = data_of.get((key[0], key[1]))
            units = descriptor_for(key[1]).paired_units_of()
            if units is not None and data is not None and key[0] in benchmarks:
                interval = _paired(units, benchmarks[key[0]], data, spec, experiment)
                paired = interval is not None
            if interval is None:
                interval = interaction_from_intervals(_interval(on_base), _interval(on_reference))
            found.append(
                Interaction(
                    change=spec.change,
                    base=spec.base,
                    reference_base=spec.reference_base,
                    benchmark=key[0],
                    metric=key[1],
                    event=key[2],
                    ratio=interval.ratio,
                    ci_low=interval.ci_low,
                    ci_high=interval.ci_high,
                    verdict=interaction_verdict(interval.ci_low, interval.ci_high, band)
                    if not math.isnan(interval.ratio)
                    else InteractionVerdict.INCONCLUSIVE,
                    on_base=on_base,
                    on_reference=on_reference,
                    paired=paired,
                )
            )
    return tuple(found)


def _paired(
    units: Callable[..., dict[int, float]],
    benchmark: Benchmark,
    data: BenchmarkData,
    spec: InteractionSpec,
    experiment: Experiment,
) -> Interval | None:
    """The interaction paired unit by unit (`units`: the lens's `paired_units` hook); None with
    fewer than two units both changes share."""
    preemption = Preemption(experiment.settings.preempted)
    on_base = units(benchmark, data, spec.base, spec.on_base, preemption)
    on_reference = units(benchmark, data, spec.reference_base, spec.on_reference, preemption)
    if len(set(on_base) & set(on_reference)) < 2:
        return None
    return paired_interaction(on_base, on_reference, family_settings(experiment).confidence)
