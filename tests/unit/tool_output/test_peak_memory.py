"""Peak memory compared: when tracemalloc's peak is not the memory change, it is said and its
verdict withheld."""

from __future__ import annotations

from perflab.lenses.rss import RSS
from perflab.records.kinds import Verdict
from perflab.records.model import Benchmark
from perflab.tool_output.peak_memory import MAXRSS_KB, PEAK_ALLOC_BYTES

HINT = "read the footprint elsewhere"  # the lens's words, which the analysis only passes on


def test_tracemalloc_s_peak_is_not_the_change_when_peak_rss_moved_far_more() -> None:
    from perflab.records.model import Comparison
    from perflab.tool_output.peak_memory import tracemalloc_blind

    def compared(event: str, before: float, after: float, verdict: Verdict) -> Comparison:
        return Comparison(
            benchmark="b",
            metric=RSS,
            baseline="out",
            variant="copy",
            ratio=after / before,
            ci_low=1.0,
            ci_high=1.0,
            verdict=verdict,
            baseline_value=before,
            variant_value=after,
            unit="B",
            event=event,
        )

    # torch tensors of 16 and 32 MB: Python's allocator saw a few hundred bytes of objects
    peak = compared(PEAK_ALLOC_BYTES, 276.0, 296.0, Verdict.SLOWER)
    rss = compared(MAXRSS_KB, 300_998.0, 375_382.0, Verdict.SLOWER)
    blind = tracemalloc_blind(peak, rss)
    assert blind is not None and "not the memory change" in blind and "375,382 kB" in blind
    # peak RSS not told apart (an A/A), or moved about as much as Python allocated: no note
    assert (
        tracemalloc_blind(peak, compared(MAXRSS_KB, 300_998, 301_000, Verdict.EQUIVALENT)) is None
    )
    listed = compared(PEAK_ALLOC_BYTES, 8_000.0, 800_000.0, Verdict.SLOWER)
    assert tracemalloc_blind(listed, compared(MAXRSS_KB, 10_000, 10_800, Verdict.SLOWER)) is None


def test_a_peak_allocated_that_is_not_the_change_is_shown_without_a_verdict() -> None:
    from perflab.records.model import BenchmarkData, Sample
    from perflab.records.settings import Settings
    from perflab.tool_output.peak_memory import analyse_peak_memory

    # torch tensors of 16 and 32 MB: peak RSS moved 380 MB, tracemalloc saw 264 B and 344 B
    samples = tuple(
        Sample(
            benchmark="t",
            variant=variant,
            metric=RSS,
            name=name,
            value=value,
            loops=1,
            generation=generation,
            block=generation,
        )
        for generation in range(3)
        for variant, rss_kb, peak in (("A", 20_000.0, 264.0), ("B", 400_000.0, 344.0))
        for name, value in ((MAXRSS_KB, rss_kb), (PEAK_ALLOC_BYTES, peak))
    )
    result = analyse_peak_memory(
        Benchmark("t", stmt="x"),
        ["A", "B"],
        BenchmarkData(samples, ()),
        Settings(),
        metric=RSS,
        blind_hint=HINT,
    )
    by_event = {c.event: c for c in result.comparisons}
    assert by_event[MAXRSS_KB].verdict is Verdict.SLOWER and by_event[MAXRSS_KB].withheld is None
    peak = by_event[PEAK_ALLOC_BYTES].to_json()
    assert (peak["verdict"], peak["interval_verdict"]) == ("inconclusive", "slower")
    assert peak["withheld_reason"] == "tracemalloc-blind" and "B" in result.blind_notes
    assert result.blind_notes["B"].hint == HINT


def test_a_lone_variant_gets_its_own_peak_rss_and_two_variants_do_not() -> None:
    from perflab.records.model import BenchmarkData, Sample
    from perflab.records.settings import Settings
    from perflab.tool_output.peak_memory import analyse_peak_memory

    def samples(variant: str) -> tuple[Sample, ...]:
        return tuple(
            Sample(
                benchmark="t",
                variant=variant,
                metric=RSS,
                name=MAXRSS_KB,
                value=value,
                loops=1,
                generation=generation,
                block=generation,
            )
            for generation, value in enumerate((20_000.0, 20_400.0, 19_800.0, 20_100.0))
        )

    alone = analyse_peak_memory(
        Benchmark("t", stmt="x"),
        ["A"],
        BenchmarkData(samples("A"), ()),
        Settings(),
        metric=RSS,
        blind_hint=HINT,
    )
    (own,) = alone.measurements
    assert (own.variant, own.unit, own.n_groups, own.group_name) == ("A", "kB", 4, "generation")
    assert own.ci_low < own.value < own.ci_high and 19_800 < own.value < 20_400
    assert (own.min, own.median, own.max) == (19_800.0, 20_050.0, 20_400.0)
    assert alone.comparisons == ()
    both = BenchmarkData(samples("A") + samples("B"), ())
    pair = analyse_peak_memory(
        Benchmark("t", stmt="x"), ["A", "B"], both, Settings(), metric=RSS, blind_hint=HINT
    )
    assert pair.measurements == () and pair.comparisons
