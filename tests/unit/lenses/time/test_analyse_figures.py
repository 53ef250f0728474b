"""The time lens's figures-only analysis (its descriptor's `figures` hook, what a published
site's trends read) gives every comparison's figures to the bit as its whole analysis does:
statements and commands, preempted samples under each --preempted policy, few generations,
warm-ups, several variants."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from perflab.lenses.registry import descriptor_for
from perflab.lenses.time.analyse import time_figures
from perflab.lenses.time.measure import TimeLens
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, BenchmarkData, Experiment, Sample, Variant
from perflab.records.settings import Settings

VARIANTS = ("a", "b", "c")


def _samples(benchmark: str, generations: int, seed: int) -> tuple[Sample, ...]:
    """Three variants (b 3% slower, c the same as a), 6 blocks per generation, a warm-up block,
    a fifth of the samples preempted (waiting on the run queue)."""
    rng = random.Random(seed)
    samples = []
    for g in range(generations):
        for b in range(-1, 6):
            for position, (name, truth) in enumerate(
                zip(VARIANTS, (1e5, 1.03e5, 1e5), strict=True)
            ):
                cpu_ns = truth * 10 * math.exp(rng.gauss(0, 0.004))
                wait = 0.2 * cpu_ns if rng.random() < 0.2 else 0.0
                samples.append(
                    Sample(benchmark, name, Metric.TIME, "wall_ns", cpu_ns + wait, loops=10,
                           generation=g, block=max(b, 0), position=position,
                           at_ns=(g * 7 + b + 1) * 10**6, warmup=b < 0,
                           run_queue_ns=int(wait), cpu_ns=int(cpu_ns))
                )  # fmt: skip
    return tuple(samples)


@pytest.mark.parametrize("preempted", ["keep", "correct", "exclude"])
@pytest.mark.parametrize("generations", [2, 6])
@pytest.mark.parametrize("command", [False, True])
def test_figures_only_are_the_whole_analysis_s_figures_to_the_bit(
    preempted: str, generations: int, command: bool
) -> None:
    benchmark = Benchmark("x", cmd="./x") if command else Benchmark("x", stmt="pass")
    experiment = Experiment(
        benchmarks=(benchmark, Benchmark("y", stmt="pass")),
        variants=tuple(Variant(name) for name in VARIANTS),
        settings=Settings(metrics=(Metric.TIME,), preempted=preempted),
    )
    data = BenchmarkData(_samples("x", generations, seed=generations))
    whole = TimeLens().analyse(benchmark, VARIANTS, data, experiment)
    figures = time_figures(benchmark, VARIANTS, data, experiment)
    assert len(whole.comparisons) == 2
    assert figures.comparisons == tuple(replace(c, details=None) for c in whole.comparisons)
    # the figures only: nothing a page would show as if it had been derived
    assert figures.notes == () and figures.measurements == () and whole.measurements


def test_the_time_lens_declares_its_figures_only_analysis() -> None:
    assert descriptor_for(Metric.TIME).figures_analysis() is time_figures
