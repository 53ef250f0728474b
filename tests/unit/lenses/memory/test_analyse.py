"""The memory lens's analysis (lenses/memory/analyse.py) from stored callgrind files
(tests/support/memory_runs.py): the memory work two variants do, its threshold and floor, the
processes' spread, and what tracemalloc's peak does not see."""

from __future__ import annotations

import json

import pytest

from perflab.lenses.memory import MEMORY
from perflab.lenses.memory.analyse import (
    KIND_UNAVAILABLE,
    WORK_FLOOR_BYTES,
    Traffic,
    analyse_memory,
    line_sizes,
    work_difference,
)
from perflab.lenses.rss import RSS
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_STATEMENT
from perflab.records.model import Artifact, Sample
from perflab.records.settings import Settings
from perflab.tool_output.callgrind_format import parse_callgrind
from perflab.tool_output.peak_memory import MAXRSS_KB
from tests.support.memory_runs import BENCHMARK, callgrind, data, stored


def test_its_cost_names_the_rss_lens_by_that_lens_s_own_name() -> None:
    """The descriptor spells the rss lens's name itself (no lens imports another): the same."""
    from perflab.lenses.memory import DESCRIPTOR

    assert RSS in {part.metric for part in DESCRIPTOR.planning.cost_parts}


def test_the_line_size_is_read_from_callgrind_s_own_description() -> None:
    text = callgrind(reads=1, writes=1, d1=(0, 0), ll=(0, 0)).replace(", 64 B, 12", ", 128 B, 12")
    (part,) = parse_callgrind(text).parts
    assert line_sizes(part.descriptions) == {"I1": 64, "D1": 128, "LL": 64}


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
    from perflab.records.kinds import Verdict
    from perflab.records.model import Comparison
    from perflab.tool_output.peak_memory import PEAK_ALLOC_BYTES

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
    from perflab.tool_output.peak_memory import PEAK_ALLOC_BYTES

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
