"""Preempted samples: recognised from the scheduler accounting, excluded in pairs or corrected."""

from __future__ import annotations

import math
import random

from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.preemption import (
    Preemption,
    corrected,
    is_preempted,
    lost_ns,
    summarise_preemption,
)


def _sample(
    variant: str,
    value: float,
    *,
    run_queue_ns: int | None = 0,
    cpu_ns: int | None = None,
    generation: int = 0,
    block: int = 0,
    warmup: bool = False,
) -> Sample:
    return Sample(
        "b",
        variant,
        Metric.TIME,
        "wall_ns",
        value,
        loops=1000,
        generation=generation,
        block=block,
        warmup=warmup,
        run_queue_ns=run_queue_ns,
        cpu_ns=value - (run_queue_ns or 0) if cpu_ns is None else cpu_ns,
    )


def test_time_lost_is_the_run_queue_wait_within_the_time_off_the_cpu() -> None:
    assert lost_ns(_sample("A", 10e6, run_queue_ns=3_000_000)) == 3e6
    # a preemption just outside the timed region: counted at most as the time off the CPU
    assert lost_ns(_sample("A", 10e6, run_queue_ns=12_000_000, cpu_ns=9_000_000)) == 1e6
    # a statement that sleeps is off the CPU without losing anything to other processes
    assert lost_ns(_sample("A", 10e6, run_queue_ns=10_000, cpu_ns=1_000_000)) == 10_000
    assert lost_ns(_sample("A", 10e6, run_queue_ns=None)) == 0.0  # no accounting (old runs)
    assert not is_preempted(_sample("A", 10e6, run_queue_ns=100_000))  # 1%
    assert is_preempted(_sample("A", 10e6, run_queue_ns=300_000))  # 3%
    assert corrected(_sample("A", 10e6, run_queue_ns=3_000_000)).value == 7e6


def _simulated(preempt_b_in: float, rng: random.Random) -> tuple[list[Sample], list[Sample]]:
    """A/A with per-generation noise; B's sample is preempted (a 4 ms slice taken) in a share
    of the blocks, A's in a few: keeping them as measured makes B look slower."""
    base: list[Sample] = []
    variant: list[Sample] = []
    for generation in range(12):
        offset = rng.gauss(0, 0.002)
        for block in range(20):
            for name, out in (("A", base), ("B", variant)):
                value = 10e6 * math.exp(offset + rng.gauss(0, 0.003))
                share = preempt_b_in if name == "B" else 0.05
                stolen = 4_000_000 if rng.random() < share else 0
                out.append(
                    _sample(
                        name,
                        value + stolen,
                        run_queue_ns=stolen + 20_000,
                        generation=generation,
                        block=block,
                    )
                )
    return base, variant


def test_excluding_or_correcting_preempted_samples_removes_the_bias_keeping_does_not() -> None:
    base, variant = _simulated(0.4, random.Random(1))
    kept = estimate_ratio(pair_samples(base, variant, preemption=Preemption.KEEP))
    excluded = estimate_ratio(pair_samples(base, variant, preemption=Preemption.EXCLUDE))
    fixed = estimate_ratio(pair_samples(base, variant, preemption=Preemption.CORRECT))
    assert kept.ci_low > 1  # a false "slower"
    assert excluded.ci_low <= 1 <= excluded.ci_high and abs(excluded.ratio - 1) < 0.005
    assert fixed.ci_low <= 1 <= fixed.ci_high and abs(fixed.ratio - 1) < 0.005
    # exclusion drops whole pairs: both sides of every block with a preempted sample
    assert excluded.n_pairs < kept.n_pairs == fixed.n_pairs


def test_exclusion_is_paired_a_preempted_baseline_drops_the_pair() -> None:
    base = [_sample("A", 14e6, run_queue_ns=4_000_000), _sample("A", 10e6, block=1)]
    variant = [_sample("B", 10e6), _sample("B", 10e6, block=1)]
    pairs = pair_samples(base, variant, preemption=Preemption.EXCLUDE)
    assert [p.block for p in pairs] == [1]


def test_summary_says_how_much_other_processes_took_and_what_was_excluded() -> None:
    samples = [
        _sample("A", 10e6, run_queue_ns=5_000_000, block=0),
        _sample("B", 10e6, block=0),
        _sample("A", 10e6, block=1),
        _sample("B", 10e6, block=1),
        _sample("A", 10e6, run_queue_ns=9_000_000, block=9, warmup=True),  # not counted
    ]
    summary = summarise_preemption(samples, ["A", "B"], Preemption.EXCLUDE)
    assert (summary.n_samples, summary.n_preempted, summary.n_excluded) == (4, 1, 2)
    assert summary.lost_share == 5e6 / 40e6
    assert summary.message(Preemption.EXCLUDE) == (
        "other processes took 12% of the measuring CPU during these samples; 1 of 4 samples "
        "were preempted, 2 samples excluded with their pairs"
    )
    assert "taken out" in summarise_preemption(samples, ["A", "B"], Preemption.CORRECT).message(
        Preemption.CORRECT
    )


def test_a_design_analysed_in_groups_says_the_load_once_with_each_variant_share() -> None:
    """A stack's steps are analysed in several groups (each baseline with its variants): the
    time lens's load note must be the same in each, so the run says it once."""
    from perflab.analyse.run import dedupe_notes
    from perflab.lenses.time.analyse import analyse_time
    from perflab.measure.lens import BenchmarkData
    from perflab.records.model import Benchmark
    from perflab.records.settings import Settings

    samples = tuple(
        _sample(v, 2e6, run_queue_ns=int(share * 2e6), generation=g, block=b)
        for g in range(3)
        for b in range(4)
        for v, share in (("base", 0.4), ("s1", 0.2), ("s2", 0.3))
    )
    benchmark = Benchmark("b", stmt="pass")
    data = BenchmarkData(samples=samples)
    notes = []
    for group in (["base", "s1"], ["s1", "s2"], ["base", "s2"]):
        notes += analyse_time(benchmark, group, data, Settings()).notes
    load = [n for n in dedupe_notes(notes) if "of the measuring CPU" in n.message]
    assert len(load) == 1
    assert "base 40%, s1 20%, s2 30%" in load[0].message
