"""The counters lens's early stop for `--precision` at the level its events are decided at (the
run's family of events x comparisons, stats.family), not each event's 95%."""

from __future__ import annotations

import random

from perflab import api
from perflab.lenses.counters.confidence import event_confidence
from perflab.lenses.counters.samples import events_within_precision
from perflab.records.kinds import Metric
from perflab.records.model import BenchmarkData, Sample
from perflab.stats.family import run_family_size


def _samples(spread: float) -> BenchmarkData:
    """Two events, two variants, 12 generations of paired counts around the same mean."""
    draw = random.Random(3)
    samples = [
        Sample(
            benchmark="b",
            variant=variant,
            metric=Metric.COUNTERS,
            name=event,
            value=1e6 * (1 + draw.gauss(0, spread)),
            loops=1,
            generation=g,
        )
        for g in range(12)
        for variant in ("A", "B")
        for event in ("instructions", "cycles")
    ]
    return BenchmarkData(tuple(samples))


def _events_within_precision(params: list[str], precision: float, spread: float) -> bool:
    made = api.make_experiment(
        name="b", stmt="pass", params={"k": params}, variants=["A", "B"], target_precision=precision
    )
    return events_within_precision(_samples(spread), made)


def test_a_larger_family_needs_a_narrower_interval_to_stop() -> None:
    one = api.make_experiment(name="b", stmt="pass", params={"k": ["1"]}, variants=["A", "B"])
    ten = api.make_experiment(
        name="b", stmt="pass", params={"k": [str(k) for k in range(10)]}, variants=["A", "B"]
    )
    assert run_family_size(one) == 1 and run_family_size(ten) == 10
    assert event_confidence(0.95, 2, 10) > event_confidence(0.95, 2, 1)
    # the same samples: precise enough for one benchmark's family, not for ten benchmarks'
    found = [
        (
            _events_within_precision(["1"], p, 0.01),
            _events_within_precision([str(k) for k in range(10)], p, 0.01),
        )
        for p in (0.006, 0.008, 0.01, 0.012, 0.015, 0.02)
    ]
    assert any(alone and not together for alone, together in found), found
    assert all(alone or not together for alone, together in found), found
