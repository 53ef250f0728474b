"""An interaction of one change on two bases, paired unit by unit from the stored samples where
the lens's descriptor says how (`paired_units`: the time lens), from two intervals otherwise."""

from __future__ import annotations

import pytest

from perflab.analyse.design_analysis import interactions_of
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import (
    Benchmark,
    BenchmarkData,
    Comparison,
    Experiment,
    InteractionSpec,
    Sample,
    Variant,
)
from perflab.records.settings import Settings
from tests.support.design_runs import BENCHMARK, design_comparison

SPEC = InteractionSpec("fix", "main", "release", "fix@main", "fix@release")
LEVELS = {"main": 100.0, "fix@main": 80.0, "release": 100.0, "fix@release": 100.0}


def _experiment(metric: Metric) -> Experiment:
    return Experiment(
        benchmarks=(Benchmark(BENCHMARK, stmt="sorted(data)"),),
        variants=tuple(Variant(n) for n in LEVELS),
        settings=Settings(metrics=(metric,)),
        interactions=(SPEC,),
    )


def _samples(metric: Metric) -> BenchmarkData:
    return BenchmarkData(
        tuple(
            Sample(
                BENCHMARK,
                variant,
                metric,
                "wall_ns",
                level * (1 + 0.01 * (g % 3)),
                block=g,
                generation=g,
            )  # fmt: skip
            for g in range(6)
            for variant, level in LEVELS.items()
        )
    )


def _cells() -> tuple[Comparison, ...]:
    return (
        design_comparison("main", "fix@main", 0.8, Verdict.FASTER),
        design_comparison("release", "fix@release", 1.0, Verdict.EQUIVALENT),
    )


def test_the_time_lens_pairs_its_interaction_unit_by_unit() -> None:
    data = {(BENCHMARK, Metric.TIME): _samples(Metric.TIME)}
    (found,) = interactions_of(_experiment(Metric.TIME), _cells(), data)
    assert found.paired
    assert found.ratio == pytest.approx(0.8)
