"""The counters lens's samples, as both its paths (statements.py, commands.py) store and read
them: a slot's counts stored as samples beside every event's availability, and the early stop
for `--precision` that reads them back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from perflab.lenses.counters.availability import AVAILABILITY
from perflab.lenses.counters.confidence import event_confidence
from perflab.lenses.counters.metric import COUNTERS
from perflab.measure.lens import BenchmarkData, LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession
from perflab.records.model import Artifact, Benchmark, Experiment, Sample
from perflab.stats.family import run_family_size
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.tool_output.perf_stat import Availability, EventCount

_PRECISION_MIN_COUNT = 10_000  # per sample; below this an event does not steer the stopping rule


def counters_sampler(benchmark: Benchmark, context: LensContext) -> InterleavedSampler[LensSession]:
    """The interleaved sampler both paths measure with, on the lens's schedule."""
    return InterleavedSampler(LensSession(benchmark, context, schedule=COUNTERS), COUNTERS)


def precise_enough(benchmark: Benchmark, context: LensContext) -> bool:
    """`events_within_precision` of what is stored of `benchmark` so far."""
    return events_within_precision(
        context.sink.data_for(benchmark.name, COUNTERS), context.experiment
    )


def store_counts(
    benchmark: Benchmark,
    context: LensContext,
    slot: Slot,
    events: Sequence[str],
    counts: Mapping[str, EventCount],
    *,
    loops: int,
) -> None:
    """The usable counts as the slot's samples, and every event's availability."""
    variant = context.experiment.variants[slot.variant].name
    availability: dict[str, Any] = {}
    for event in events:
        count = counts.get(event)
        if count is None:
            availability[event] = {"availability": str(Availability.NOT_COUNTED)}
            continue
        availability[event] = {
            "availability": str(count.availability),
            "running_fraction": count.running_fraction,
            "user_only": count.user_only,
            "unit": count.unit,
        }
        if count.availability.usable and count.value is not None:
            context.sink.add_sample(
                Sample(
                    benchmark=benchmark.name,
                    variant=variant,
                    metric=COUNTERS,
                    name=event,
                    value=count.value,
                    loops=max(loops, 1),
                    generation=slot.generation,
                    block=slot.block,
                    position=slot.position,
                    warmup=slot.warmup,
                )
            )
    context.sink.add_artifact(
        Artifact(
            benchmark.name,
            variant,
            COUNTERS,
            AVAILABILITY,
            json.dumps(availability),
            generation=slot.generation or slot.block,  # one of the two is always 0
        )
    )


def events_within_precision(data: BenchmarkData, experiment: Experiment) -> bool:
    """--precision's early stop: every event's ratio of every variant to the baseline is known
    to within `target_precision`, at the level the events are decided at once analysed."""
    target = experiment.settings.target_precision
    variants = [v.name for v in experiment.variants]
    names = {s.name for s in data.samples}
    # the level the events are decided at (their family's): a stop at 95% would leave them
    # wider than the target once analysed
    level = event_confidence(
        experiment.settings.confidence, len(names), run_family_size(experiment)
    )
    for name in names:
        base = data.samples_of(variants[0], name)
        if sum(s.value for s in base) < _PRECISION_MIN_COUNT * max(len(base), 1):
            # rare events (a few context switches) are Poisson noise: they never settle
            continue
        for other in variants[1:]:
            pairs = pair_samples(base, data.samples_of(other, name))
            estimate = estimate_ratio(pairs, confidence=level)
            if estimate.n_groups >= 2 and estimate.log_half_width > target:
                return False
    return True
