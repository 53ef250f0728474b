"""A run's failures (engine/failures.py): which failures are single variants', what is left to
measure without them, each failure said once, and the failed variants marked for their lens."""

from __future__ import annotations

import dataclasses
import json

from perflab.engine.failures import (
    RunFailures,
    comparable,
    describe,
    failed_variants,
    without_failed,
)
from perflab.lenses.time.measure import TimeLens
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import FAILED_ARTIFACT, MemorySink
from perflab.records.errors import BenchmarkFailedError, VariantsFailed
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import lens_context

BENCH = Benchmark(name="b", stmt="f()")
THREE = Experiment((BENCH,), (Variant("A"), Variant("B"), Variant("C")), FAST)


def _failure(variant: str | None, message: str = "crashed") -> BenchmarkFailedError:
    return BenchmarkFailedError(message, variant=variant, benchmark="b")


def test_a_variants_failure_leaves_the_others_and_the_benchmarks_own_ends_it() -> None:
    crashed = _failure("B")
    assert failed_variants(crashed, THREE) == (crashed,)
    both = VariantsFailed([_failure("B"), _failure("C")])
    assert [f.variant for f in failed_variants(both, THREE)] == ["B", "C"]
    # the benchmark's own failure, or the only variant's, is no variant's to leave out
    assert failed_variants(_failure(None), THREE) == ()
    alone = Experiment((BENCH,), (Variant("A"),), FAST)
    assert failed_variants(_failure("A"), alone) == ()


def test_what_is_left_is_measured_while_a_planned_comparison_remains() -> None:
    context, _ = lens_context(FakeRunner(), FAST)
    context = dataclasses.replace(context, experiment=THREE)
    left = without_failed(THREE, context, (_failure("B"),))
    assert left is not None and [v.name for v in left.experiment.variants] == ["A", "C"]
    # without the baseline no planned pair (A-B, A-C) is left
    assert without_failed(THREE, context, (_failure("A"),)) is None
    assert comparable(THREE, {"A", "C"}) and not comparable(THREE, {"B", "C"})
    assert comparable(Experiment((BENCH,), (Variant("A"),), FAST), {"A"})


def test_a_variant_that_cannot_be_prepared_is_said_once_for_all_its_benchmarks() -> None:
    sink = MemorySink()
    failures = RunFailures(sink)  # type: ignore[arg-type]
    failures.not_prepared(_failure("B", "no such ref"))
    failures.not_prepared(_failure("B", "no such ref"))
    assert len(failures.errors) == 1 and len(sink.notes) == 1
    assert sink.notes[0].message == "not measured: no such ref"
    assert failures.summary() == "benchmark 'b', variant 'B': no such ref"


def test_variants_failed_under_a_lens_are_marked_for_its_analysis() -> None:
    sink = MemorySink()
    failures = RunFailures(sink)  # type: ignore[arg-type]
    failures.variants_failed(BENCH, TimeLens(), (_failure("B"), _failure("C", "timed out")))
    assert [n.variant for n in sink.notes] == ["B", "C"]
    marked = [(a.variant, a.metric, json.loads(a.content)) for a in sink.artifacts]
    assert marked == [
        ("B", Metric.TIME, {"reason": "crashed"}),
        ("C", Metric.TIME, {"reason": "timed out"}),
    ]
    assert all(a.kind == FAILED_ARTIFACT for a in sink.artifacts)
    assert failures.summary() == (
        "benchmark 'b', variant 'B': crashed; benchmark 'b', variant 'C': timed out"
    )


def test_an_interrupted_run_is_described_as_such() -> None:
    assert describe(KeyboardInterrupt()) == "interrupted"
    assert describe(ValueError()) == "ValueError"
