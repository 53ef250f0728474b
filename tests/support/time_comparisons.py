"""Time samples of one benchmark, "b", under two variants, base and other, and the time lens's
comparison of them: for the tests of the time table's columns and of the report's words about
them (tests/unit/lenses/time/, tests/unit/report/)."""

from __future__ import annotations

import math
import random

from perflab.lenses.time.analyse import analyse_time
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, BenchmarkData, Comparison, Note, Sample
from perflab.records.settings import Settings


def time_samples(rng: random.Random, *, preempted: tuple[float, float]) -> list[Sample]:
    """base ~100 us, other ~900 us per iteration; a share of each side's samples lost half
    their wall time again to other processes (recorded as run-queue wait)."""
    samples = []
    for g in range(8):
        for b in range(12):
            for side, (name, truth) in enumerate((("base", 1e5), ("other", 9e5))):
                cpu = truth * 10 * math.exp(rng.gauss(0, 0.01))
                wait = 1.5 * cpu if rng.random() < preempted[side] else 0.0
                samples.append(
                    Sample("b", name, Metric.TIME, "wall_ns", cpu + wait, loops=10,
                           generation=g, block=b, run_queue_ns=int(wait), cpu_ns=int(cpu))
                )  # fmt: skip
    return samples


def time_comparison(
    samples: list[Sample], settings: Settings | None = None, family: int = 1
) -> tuple[Comparison, tuple[Note, ...]]:
    """The time lens's one comparison of `samples` (benchmark "b", base against other) and the
    notes its analysis wrote."""
    data = BenchmarkData(tuple(samples))
    analysis = analyse_time(
        Benchmark("b", stmt="x"), ["base", "other"], data, settings or Settings(), family=family
    )
    (comparison,) = analysis.comparisons
    return comparison, analysis.notes
