"""The memory lens's measuring (lenses/memory/measure.py) with stand-ins for the callgrind
counter and the peak-memory lens: both measurements filed under `memory`, a variant valgrind
cannot run recorded and the others measured, environments of one size."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from perflab.lenses.memory import MEMORY
from perflab.lenses.memory.analyse import KIND_UNAVAILABLE
from perflab.lenses.memory.measure import MemoryLens
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind.count import CountOptions
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Experiment, Sample, Variant
from perflab.records.run_facts import VariantInfo
from perflab.records.settings import Settings
from perflab.tool_output.peak_memory import MAXRSS_KB

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.lenses.memory.measure"

BENCHMARK = Benchmark("b", cmd="prog")


class _Traffic:
    """Stands in for the callgrind counter: stores one traffic sample, or fails like valgrind."""

    options = CountOptions(MEMORY)

    def __init__(self, failures: dict[str, str]) -> None:
        self.failures = failures
        self.counting = self.options
        self.seen: list[tuple[str, bool]] = []

    def with_options(self, options: CountOptions) -> _Traffic:
        self.counting = options
        return self

    def started_alike(self, context: LensContext, compared: int) -> _Traffic:
        # every variant started alike: the lens fixes fork-or-fresh once, for all of them
        assert compared == len(context.experiment.variants)
        self.counting = replace(self.counting, fork=True)
        return self

    def count(
        self, benchmark: Benchmark, context: LensContext, variants: Sequence[Variant] | None
    ) -> None:
        # the experiment as it was given: the lens asks for one variant and the cache
        # simulation in the counter's options, rewriting neither settings nor variants
        assert [v.name for v in context.experiment.variants] == ["a", "b"]
        assert context.experiment.settings.option("cache_sim") is None
        assert variants is not None
        (variant,) = variants
        assert self.counting.fork is not None  # decided before the first call
        self.seen.append((variant.name, self.counting.cache_sim))
        if variant.name in self.failures:
            raise BenchmarkFailedError("callgrind failed", detail=self.failures[variant.name])
        # files under the metric its options name, as the callgrind counter does
        metric = self.counting.metric
        context.sink.add_sample(Sample(benchmark.name, variant.name, metric, "instructions", 1.0))
        context.sink.add_variant_info(
            variant.name, VariantInfo.of_lens(str(metric), {"repeats": 2})
        )


class _Footprint:
    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        for variant in context.experiment.variants:
            context.sink.add_sample(Sample(benchmark.name, variant.name, MEMORY, MAXRSS_KB, 1.0))


def _measure(traffic: _Traffic) -> MemorySink:
    sink = MemorySink()
    experiment = Experiment((BENCHMARK,), (Variant("a"), Variant("b")), Settings(metrics=(MEMORY,)))
    context = LensContext(experiment, FakeRunner(), sink, NullProgress(), None, "python3")
    lens = MemoryLens(traffic=traffic, footprint=_Footprint())  # type: ignore[arg-type]
    lens.measure(BENCHMARK, context)
    return sink


def test_measuring_files_both_measurements_under_memory_and_goes_on_past_valgrind() -> None:
    traffic = _Traffic({"b": "==1==  Illegal opcode at address 0x10"})
    sink = _measure(traffic)
    assert traffic.seen == [("a", True), ("b", True)]  # the cache simulation, always
    assert {s.metric for s in sink.samples} == {MEMORY}
    assert {(s.variant, s.name) for s in sink.samples} == {
        ("a", MAXRSS_KB), ("b", MAXRSS_KB), ("a", "instructions")
    }  # fmt: skip
    (artifact,) = sink.artifacts
    assert artifact.kind == KIND_UNAVAILABLE and artifact.variant == "b"
    assert sink.variant_info["a"] == {"memory": {"repeats": 2}}


def test_other_failures_under_valgrind_still_fail_the_benchmark() -> None:
    with pytest.raises(BenchmarkFailedError):
        _measure(_Traffic({"a": "Traceback ... ValueError"}))
