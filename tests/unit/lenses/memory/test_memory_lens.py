"""The memory lens's analysis from stored callgrind files (written here in callgrind's format),
its threshold, its measuring with stand-in lenses, and its section."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pytest

from perflab.lenses.fragments import SectionInput
from perflab.lenses.memory import MEMORY
from perflab.lenses.memory.analyse import (
    KIND_UNAVAILABLE,
    WORK_FLOOR_BYTES,
    Traffic,
    analyse_memory,
    line_sizes,
    work_difference,
)
from perflab.lenses.memory.measure import MemoryLens, same_size_environments
from perflab.lenses.memory.render import section
from perflab.lenses.rss import RSS
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind.artifacts import KIND_COMMAND, KIND_EMPTY, KIND_STATEMENT
from perflab.measure.callgrind.count import CountOptions
from perflab.measure.callgrind.count_options import environment_bytes
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.measure.peak_memory.analyse import MAXRSS_KB
from perflab.measure.worker_client import variant_environment
from perflab.plan.specs import parse_metrics
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Experiment, Sample, Variant
from perflab.records.settings import Settings

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.lenses.memory"

EVENTS = "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"


def callgrind(
    *, reads: int, writes: int, d1: tuple[int, int], ll: tuple[int, int], mallocs: int = 0
) -> str:
    """A callgrind file: one function with these data costs, calling malloc `mallocs` times."""
    lines = [
        "# callgrind format",
        "version: 1",
        "creator: callgrind-3.19.0",
        "cmd: /usr/bin/prog",
        "part: 1",
        "desc: I1 cache: 32768 B, 64 B, 8-way associative",
        "desc: D1 cache: 49152 B, 64 B, 12-way associative",
        "desc: LL cache: 2097152 B, 64 B, 16-way associative",
        "positions: line",
        f"events: {EVENTS}",
        "ob=(1) /usr/bin/prog",
        "fl=(1) prog.c",
        "fn=(1) kernel",
        f"10 1000 {reads} {writes} 0 {d1[0]} {d1[1]} 0 {ll[0]} {ll[1]}",
    ]
    if mallocs:
        lines += [
            "cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6",
            "cfi=(2) malloc.c",
            "cfn=(2) malloc",
            f"calls={mallocs} 0",
            "11 50 10 5 0 1 0 0 1 0",
            "ob=(2)",
            "fl=(2)",
            "fn=(2)",
            "20 50 10 5 0 1 0 0 1 0",
        ]
    return "\n".join(lines) + "\n"


def stored(
    variant: str,
    *,
    passes: int,
    mallocs: int = 0,
    repeats: int = 2,
    statement: bool = False,
    rss_kb: float = 10_000.0,
) -> tuple[list[Sample], list[Artifact]]:
    """What the lens stores for a variant whose loop makes `passes` trips over 1 MiB per
    iteration (10 iterations per repeat), under callgrind's cache simulation, and its peak RSS."""
    samples, artifacts = [], []
    lines = 1 << 14  # 1 MiB / 64 B
    for repeat in range(repeats):
        misses = passes * lines * 10 // 2
        text = callgrind(
            reads=passes * 10_000, writes=passes * 5_000, d1=(misses, misses),
            ll=(misses, misses), mallocs=mallocs * 10,
        )  # fmt: skip
        if statement:
            artifacts.append(Artifact("b", variant, MEMORY, KIND_STATEMENT, text, repeat))
            empty = callgrind(reads=100, writes=50, d1=(1, 1), ll=(1, 1))
            artifacts.append(Artifact("b", variant, MEMORY, KIND_EMPTY, empty, repeat))
        else:
            artifacts.append(Artifact("b", variant, MEMORY, KIND_COMMAND, text, repeat))
        samples.append(
            Sample(
                benchmark="b",
                variant=variant,
                metric=MEMORY,
                name="instructions",
                value=1000.0,
                loops=10,
                generation=repeat,
            )
        )
        samples.append(
            Sample(
                benchmark="b",
                variant=variant,
                metric=MEMORY,
                name=MAXRSS_KB,
                value=rss_kb,
                loops=1,
                generation=repeat,
                position=0,
            )
        )
    return samples, artifacts


def data(*variants: tuple[list[Sample], list[Artifact]]) -> BenchmarkData:
    return BenchmarkData(
        samples=tuple(s for v in variants for s in v[0]),
        artifacts=tuple(a for v in variants for a in v[1]),
    )


BENCHMARK = Benchmark("b", cmd="prog")


def test_the_lens_is_registered_by_its_descriptor_alone() -> None:
    assert parse_metrics("time,memory") == (Metric.TIME, MEMORY)


def test_its_cost_names_the_rss_lens_by_that_lens_s_own_name() -> None:
    """The descriptor spells the rss lens's name itself (no lens imports another): the same."""
    from perflab.lenses.memory import DESCRIPTOR

    assert RSS in {part.metric for part in DESCRIPTOR.planning.cost_parts}


def test_the_line_size_is_read_from_callgrind_s_own_description() -> None:
    text = callgrind(reads=1, writes=1, d1=(0, 0), ll=(0, 0)).replace(", 64 B, 12", ", 128 B, 12")
    assert line_sizes(text) == {"I1": 64, "D1": 128, "LL": 64}


def test_three_trips_against_two_are_different_memory_work_and_named_so() -> None:
    result = analyse_memory(
        BENCHMARK,
        ["out", "copy"],
        data(stored("out", passes=2), stored("copy", passes=3, mallocs=1)),
        Settings(),
    )
    by = {c.event: c for c in result.comparisons}
    ll = by["ll_fill_bytes"]
    assert ll.baseline_value == 2 * 2**20  # misses × 64 B
    assert ll.variant_value == pytest.approx(3 * 2**20, rel=1e-4)  # (+ malloc's own misses)
    assert ll.ratio == pytest.approx(1.5, rel=1e-4) and ll.unit == "B"
    assert by["data_reads"].ratio == pytest.approx(1.5, rel=1e-3)
    assert by["data_reads"].unit == "reads"
    assert "allocations" not in by  # none in the baseline: no ratio
    payload = ll.to_json()
    assert payload["memory"]["variant"]["allocations"] == 1
    assert payload["line_bytes"] == {"I1": 64, "D1": 64, "LL": 64}
    assert payload["different_memory_work"]["ratio"] == pytest.approx(1.5, rel=1e-4)
    (note,) = [n for n in result.notes if "memory work" in n.message]
    assert note.message.startswith("`copy` moves 1.5x the bytes per iteration of `out`")
    assert "LL data misses × 64 B" in note.message and note.metric is MEMORY


def test_statement_counts_are_the_loop_minus_the_empty_loop() -> None:
    result = analyse_memory(
        BENCHMARK,
        ["a", "b"],
        data(stored("a", passes=2, statement=True), stored("b", passes=2, statement=True)),
        Settings(),
    )
    by = {c.event: c for c in result.comparisons}
    # the empty loop's 2 misses over 10 iterations are taken off: 0.2 misses × 64 B
    assert by["d1_fill_bytes"].baseline_value == pytest.approx(2 * 2**20 - 0.2 * 64)
    assert not [n for n in result.notes if "memory work" in n.message]


def test_the_same_program_twice_is_the_same_memory_work() -> None:
    result = analyse_memory(
        BENCHMARK, ["a", "b"], data(stored("a", passes=2), stored("b", passes=2)), Settings()
    )
    assert not result.notes
    assert all(c.to_json()["different_memory_work"] is None for c in result.comparisons)


def _traffic(*bytes_per_iteration: float) -> Traffic:
    values = tuple(bytes_per_iteration)
    return Traffic({"ll_fill_bytes": values, "d1_fill_bytes": values}, {"D1": 64, "LL": 64})


def test_the_threshold_the_floor_and_the_repeats_spread() -> None:
    mib = float(2**20)
    assert work_difference(_traffic(mib, mib), _traffic(1.09 * mib, 1.09 * mib)) is None
    found = work_difference(_traffic(mib, mib), _traffic(1.12 * mib, 1.12 * mib))
    assert found is not None and found.ratio == pytest.approx(1.12)
    # 1.2x in the medians, but the repeats overlap the threshold: not called
    assert work_difference(_traffic(mib, mib), _traffic(1.05 * mib, 1.35 * mib)) is None
    # a few lines per iteration: allocator and interpreter state, not the benchmark's data
    small = WORK_FLOOR_BYTES / 4
    assert work_difference(_traffic(small, small), _traffic(2 * small, 2 * small)) is None
    gone = work_difference(_traffic(mib, mib), _traffic(0.5 * mib, 0.5 * mib))
    assert gone is not None and gone.ratio == pytest.approx(0.5)
    from_nothing = work_difference(_traffic(0.0, 0.0), _traffic(mib, mib))
    assert from_nothing is not None
    assert from_nothing.sentence("a", "b").startswith(
        "`b` moves 1,048,576 B per iteration where `a` moves none"
    )
    assert from_nothing.to_json("a", "b")["ratio"] is None
    assert from_nothing.to_json("a", "b")["ci_low"] is None  # JSON has no infinity
    to_nothing = work_difference(_traffic(mib, mib), _traffic(0.0, 0.0))
    assert to_nothing is not None
    assert to_nothing.sentence("a", "b").startswith("`b` moves none where `a` moves 1,048,576 B")


def test_a_variant_valgrind_cannot_run_is_named_and_keeps_its_peak_rss() -> None:
    samples = [
        Sample(
            benchmark="b",
            variant="avx",
            metric=MEMORY,
            name=MAXRSS_KB,
            value=12_000.0,
            loops=1,
            generation=g,
        )
        for g in range(2)
    ]
    unavailable = Artifact(
        "b", "avx", MEMORY, KIND_UNAVAILABLE, json.dumps({"valgrind": "Illegal opcode at 0x1"})
    )
    result = analyse_memory(
        BENCHMARK,
        ["sse", "avx"],
        data(stored("sse", passes=2), (samples, [unavailable])),
        Settings(),
    )
    assert [c.event for c in result.comparisons] == [MAXRSS_KB]
    (note,) = result.notes
    assert "valgrind cannot execute 'avx'" in note.message and "Illegal opcode" in note.message
    payload = result.comparisons[0].to_json()
    assert payload["traffic_unavailable"] == {"variant": "Illegal opcode at 0x1"}
    assert payload["memory"]["variant"]["ll_fill_bytes"] is None
    assert payload["memory"]["variant"]["peak_alloc_bytes"] is None  # a key, never left out


def test_variants_measured_one_at_a_time_keep_environments_of_one_size() -> None:
    variants = same_size_environments((Variant("a"), Variant("b", env={"LONG_NAME": "x" * 50})))
    sizes = {environment_bytes(variant_environment(v)) for v in variants}
    assert len(sizes) == 1


class _Traffic:
    """Stands in for the callgrind counter: stores one traffic sample, or fails like valgrind."""

    options = CountOptions()

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
        context.sink.add_variant_info(variant.name, {str(metric): {"repeats": 2}})


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


def _section_input() -> SectionInput:
    result = analyse_memory(
        BENCHMARK,
        ["out", "copy"],
        data(stored("out", passes=2), stored("copy", passes=3, mallocs=1, rss_kb=14_000.0)),
        Settings(),
    )
    experiment = Experiment((BENCHMARK,), (Variant("out"), Variant("copy")), Settings())
    return SectionInput(MEMORY, result.comparisons, experiment, notes=result.notes)


def test_the_section_says_what_each_number_is() -> None:
    built = section(_section_input())
    assert built.key == "memory"
    text = repr(built)
    assert "do not do the same memory work" in text
    assert "bytes brought into D1 (D1 misses × 64 B)" in text
    assert "peak RSS of the process (not per iteration)" in text


def by_process(variant: str, levels: list[tuple[int, int]]) -> tuple[list[Sample], list[Artifact]]:
    """A statement's stored repeats, two per worker process: each process's (data reads, D1
    misses) over 10 iterations, as the instructions lens numbers them (block = process)."""
    samples, artifacts = [], []
    for process, (reads, d1) in enumerate(levels):
        for repeat in range(2):
            generation = process * 4 + repeat
            text = callgrind(reads=reads, writes=reads // 2, d1=(d1, 0), ll=(0, 0))
            empty = callgrind(reads=0, writes=0, d1=(0, 0), ll=(0, 0))
            artifacts.append(Artifact("b", variant, MEMORY, KIND_STATEMENT, text, generation))
            artifacts.append(Artifact("b", variant, MEMORY, KIND_EMPTY, empty, generation))
            samples.append(
                Sample(
                    benchmark="b",
                    variant=variant,
                    metric=MEMORY,
                    name="instructions",
                    value=1000.0,
                    loops=10,
                    generation=generation,
                    block=process,
                )
            )
    return samples, artifacts


def test_an_a_a_whose_processes_settled_apart_makes_no_claim() -> None:
    # identical code: the second process of each side counted more; B's both a little above
    # A's, which the bare interval over repeats called a difference
    result = analyse_memory(
        BENCHMARK,
        ["a", "b"],
        data(
            by_process("a", [(100_000, 16), (101_000, 17)]),
            by_process("b", [(101_500, 18), (102_000, 19)]),
        ),
        Settings(),
    )
    by = {c.event: c for c in result.comparisons}
    assert by["data_reads"].ci_low > 1.0 / 1.05  # widened by both sides' process spreads ...
    assert by["data_reads"].ci_low < 1 < by["data_reads"].ci_high  # ... to hold 1: no claim
    assert by["data_reads"].to_json()["baseline_processes"] == [10_000.0, 10_100.0]
    # ~110 B per iteration brought into D1: a few lines of state, never a verdict
    d1 = by["d1_fill_bytes"]
    assert d1.verdict.value == "inconclusive"
    assert "4,096 B per iteration" in d1.to_json()["verdict_withheld"]
    assert not any(c.verdict.value in ("faster", "slower") for c in result.comparisons)
    assert not [n for n in result.notes if "memory work" in n.message]


def test_twice_a_few_lines_is_shown_without_a_verdict() -> None:
    # ~100 B against ~200 B per iteration brought into D1: an interval that says `slower`,
    # withheld; the same reads are `equivalent`, which nothing withholds
    result = analyse_memory(
        BENCHMARK,
        ["a", "b"],
        data(
            by_process("a", [(100_000, 16), (100_000, 16)]),
            by_process("b", [(100_000, 32), (100_000, 32)]),
        ),
        Settings(),
    )
    by = {c.event: c for c in result.comparisons}
    d1 = by["d1_fill_bytes"].to_json()
    assert (d1["verdict"], d1["interval_verdict"]) == ("inconclusive", "slower")
    assert d1["withheld_reason"] == "below-work-floor" and "4,096 B" in d1["verdict_withheld"]
    assert by["data_reads"].verdict.value == "equivalent" and by["data_reads"].withheld is None


def test_tracemalloc_s_peak_is_not_the_memory_change_of_natively_allocated_tensors() -> None:
    from perflab.lenses.memory.analyse import tracemalloc_blind_to_traffic
    from perflab.measure.peak_memory.analyse import PEAK_ALLOC_BYTES
    from perflab.records.kinds import Verdict
    from perflab.records.model import Comparison

    # torch tensors of 16 and 32 MB: tracemalloc saw 264 and 344 B (Python objects only)
    peak = Comparison(
        benchmark="b",
        metric=RSS,
        baseline="a",
        variant="b",
        ratio=1.303,
        ci_low=1.2,
        ci_high=1.4,
        verdict=Verdict.SLOWER,
        baseline_value=264.0,
        variant_value=344.0,
        unit="B",
        event=PEAK_ALLOC_BYTES,
    )
    blind = tracemalloc_blind_to_traffic(peak, _traffic(16e6), _traffic(32e6))
    assert blind is not None and "not the memory change" in blind
    # a loop that moves about what Python allocated: the peak may be the change
    assert tracemalloc_blind_to_traffic(peak, _traffic(2000.0), _traffic(3000.0)) is None


def _with_peaks(
    stored_variant: tuple[list[Sample], list[Artifact]], peak_alloc_bytes: float
) -> tuple[list[Sample], list[Artifact]]:
    from perflab.measure.peak_memory.analyse import PEAK_ALLOC_BYTES

    samples, artifacts = stored_variant
    peaks = [
        Sample(
            benchmark="b",
            variant=s.variant,
            metric=MEMORY,
            name=PEAK_ALLOC_BYTES,
            value=peak_alloc_bytes,
            loops=1,
            generation=s.generation,
        )
        for s in samples
        if s.name == MAXRSS_KB
    ]
    return samples + peaks, artifacts


def test_one_note_says_tracemalloc_missed_the_change_with_the_traffic_s_evidence() -> None:
    """Peak RSS and the bytes brought into D1 both show tracemalloc's peak is not the change:
    said once, with the traffic's evidence (the peak-memory analysis's own note is dropped)."""
    result = analyse_memory(
        BENCHMARK,
        ["a", "b"],
        data(
            _with_peaks(stored("a", passes=2, repeats=4, rss_kb=20_000.0), 264.0),
            _with_peaks(stored("b", passes=2, repeats=4, rss_kb=400_000.0), 344.0),
        ),
        Settings(),
    )
    blind = [n for n in result.notes if "tracemalloc" in n.message]
    assert len(blind) == 1, [n.message for n in blind]
    assert "into D1" in blind[0].message and blind[0].metric is MEMORY
    (peak,) = [c for c in result.comparisons if c.event == "peak_alloc_bytes"]
    assert peak.verdict.value == "inconclusive" and peak.interval_verdict is not None
    assert peak.to_json()["withheld_reason"] == "tracemalloc-blind"
