"""`perflab compare` decides every shared variant of every shared benchmark: its family counts
them all (benchmarks x variants), as a run counts its benchmarks x variant pairs."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from perflab.analyse.compare import compare_runs
from perflab.analyse.run import analyse_run
from perflab.lenses.time.analyse import TimeDetails
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Comparison, Experiment, Sample, Variant
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import Settings
from perflab.stats.family import family_confidence
from perflab.store.sqlite import StoredRun

BENCHMARKS = (Benchmark("a", stmt="pass"), Benchmark("b", stmt="pass"))


def _samples(variants: tuple[str, ...], seed: int) -> tuple[Sample, ...]:
    """Wall times of 8 generations of 4 blocks, every variant about 1 us per iteration."""
    rng = random.Random(seed)
    samples = []
    for benchmark in BENCHMARKS:
        for generation in range(8):
            for block in range(4):
                for position, variant in enumerate(variants):
                    samples.append(
                        Sample(
                            benchmark=benchmark.name,
                            variant=variant,
                            metric=Metric.TIME,
                            name="wall_ns",
                            value=1000.0 * 1000 * rng.uniform(0.98, 1.02),
                            loops=1000,
                            generation=generation,
                            block=block,
                            position=position,
                            at_ns=(generation * 4 + block) * 10**7,
                        )
                    )
    return tuple(samples)


def _run(run_id: int, variants: tuple[str, ...]) -> StoredRun:
    experiment = Experiment(
        benchmarks=BENCHMARKS,
        variants=tuple(Variant(name) for name in variants),
        settings=Settings(metrics=(Metric.TIME,)),
    )
    return StoredRun(
        run_id=run_id,
        created_at="2026-01-01T00:00:00+00:00",
        finished_at=None,
        status=RunStatus.COMPLETE,
        perflab_version="0",
        experiment=experiment,
        machine=MachineInfo(),
        error=None,
        samples=_samples(variants, run_id),
        artifacts=(),
        notes=(),
        variant_info={},
    )


def _families(comparisons: Sequence[Comparison]) -> set[tuple[int, float]]:
    """Every comparison's (family_size, confidence), as its JSON gives them."""
    found = set()
    for comparison in comparisons:
        assert isinstance(comparison.details, TimeDetails)
        details = comparison.details.to_json()
        found.add((details["family_size"], details["confidence"]))
    return found


def test_compare_counts_every_variant_and_benchmark_it_decides() -> None:
    result = compare_runs(_run(1, ("A", "B")), _run(2, ("A", "B")))
    times = [c for c in result.comparisons if c.metric is Metric.TIME]
    assert len(times) == 4  # 2 variants x 2 benchmarks
    assert _families(times) == {(4, family_confidence(0.95, 4))}


def test_compare_and_run_agree_on_the_family_of_as_many_comparisons() -> None:
    """A run of 3 variants (2 pairs) on 2 benchmarks decides 4 comparisons; so does comparing
    two runs of 2 variants on them: the same family size and level."""
    run = analyse_run(_run(3, ("A", "B", "C")))
    compared = compare_runs(_run(1, ("A", "B")), _run(2, ("A", "B")))
    run_times = [c for c in run.comparisons if c.metric is Metric.TIME]
    compared_times = [c for c in compared.comparisons if c.metric is Metric.TIME]
    assert len(run_times) == len(compared_times) == 4
    assert _families(run_times) == _families(compared_times) == {(4, family_confidence(0.95, 4))}


def test_runs_that_share_no_variant_are_refused_naming_each_side_s() -> None:
    with pytest.raises(ConfigError, match="share no variant") as refused:
        compare_runs(_run(1, ("A", "B")), _run(2, ("X", "Y")))
    assert ": A, B;" in refused.value.message and ": X, Y)" in refused.value.message
