"""The time lens's units for an interaction paired over generations: the mean of each unit's
paired ratios, read from the stored samples (analyse/design_analysis.py combines two changes'
units into one interaction)."""

from __future__ import annotations

from perflab.lenses.time.artifacts import WALL_NS, command_units_of, server_rounds_of
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, BenchmarkData
from perflab.stats.paired import pair_samples, unit_means
from perflab.stats.preemption import Preemption


def paired_units(
    benchmark: Benchmark, data: BenchmarkData, baseline: str, variant: str, preemption: Preemption
) -> dict[int, float]:
    """Unit -> the mean ratio of `variant` to `baseline` over its paired samples."""
    base = data.samples_of(baseline, WALL_NS)
    batch = None
    if benchmark.kind is BenchmarkKind.COMMAND:
        batch = command_units_of(data, len({s.block for s in base if not s.warmup}))
    return unit_means(
        pair_samples(
            base,
            data.samples_of(variant, WALL_NS),
            batch_blocks=batch,
            preemption=preemption,
        ),
        server_rounds_of(data),  # forked generations: their server rounds are the units
    )
