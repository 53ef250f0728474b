"""The rss lens's analysis (lenses.rss.analyse): the peak-memory analysis filed under `rss`,
its comparisons and notes as the lens's."""

from __future__ import annotations

from perflab.lenses.rss import RSS
from perflab.lenses.rss.analyse import analyse_rss
from perflab.records.kinds import Verdict
from perflab.records.model import Benchmark, BenchmarkData, Sample
from perflab.records.settings import Settings
from perflab.tool_output.peak_memory import MAXRSS_KB, PEAK_ALLOC_BYTES, RssDetails

BENCHMARK = Benchmark("b", stmt="x")


SUBJECT = "perflab.lenses.rss.analyse"


def samples(values: dict[str, dict[str, float]], generations: int = 4) -> BenchmarkData:
    """variant -> measure -> its value in every generation (a little noise so that the interval
    is finite)."""
    return BenchmarkData(
        samples=tuple(
            Sample("b", variant, RSS, name, value * (1 + g / 1000), generation=g, block=g)
            for g in range(generations)
            for variant, measures in values.items()
            for name, value in measures.items()
        )
    )


def test_each_measure_of_each_variant_is_compared_with_the_baseline_under_rss() -> None:
    data = samples(
        {
            "A": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 1_000_000.0},
            "B": {MAXRSS_KB: 30_000.0, PEAK_ALLOC_BYTES: 1_500_000.0},
            "C": {MAXRSS_KB: 10_000.0, PEAK_ALLOC_BYTES: 500_000.0},
        }
    )
    analysis = analyse_rss(BENCHMARK, ["A", "B", "C"], data, Settings())
    found = [(c.event, c.variant, c.verdict) for c in analysis.comparisons]
    assert found == [
        (MAXRSS_KB, "B", Verdict.SLOWER),
        (MAXRSS_KB, "C", Verdict.FASTER),
        (PEAK_ALLOC_BYTES, "B", Verdict.SLOWER),
        (PEAK_ALLOC_BYTES, "C", Verdict.FASTER),
    ]
    assert all(c.metric == RSS and c.baseline == "A" for c in analysis.comparisons)
    peak_rss = analysis.comparisons[0]
    assert (peak_rss.unit, peak_rss.baseline_value) == ("kB", 20_000.0 * 1.0015)
    assert isinstance(peak_rss.details, RssDetails) and peak_rss.details.n_groups == 4
    assert analysis.notes == ()


def test_a_peak_allocated_blind_to_the_change_keeps_its_note_but_no_verdict() -> None:
    # peak RSS grew 10 MB; Python's allocator saw a few hundred bytes of it
    data = samples(
        {
            "A": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 264.0},
            "B": {MAXRSS_KB: 30_000.0, PEAK_ALLOC_BYTES: 344.0},
        }
    )
    analysis = analyse_rss(BENCHMARK, ["A", "B"], data, Settings())
    peak_allocated = analysis.comparisons[1]
    assert peak_allocated.verdict is Verdict.INCONCLUSIVE
    assert peak_allocated.interval_verdict is Verdict.SLOWER
    (note,) = analysis.notes
    assert "not the memory change" in note.message and note.metric == RSS


def test_a_loop_that_allocates_nothing_in_either_is_not_compared_nor_noted() -> None:
    data = samples(
        {
            "A": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 0.0},
            "B": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 0.0},
        }
    )
    analysis = analyse_rss(BENCHMARK, ["A", "B"], data, Settings())
    assert [c.event for c in analysis.comparisons] == [MAXRSS_KB]
    assert analysis.notes == ()


def test_a_zero_on_one_side_is_said_instead_of_a_ratio() -> None:
    data = samples(
        {
            "A": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 0.0},
            "B": {MAXRSS_KB: 20_000.0, PEAK_ALLOC_BYTES: 800.0},
        }
    )
    analysis = analyse_rss(BENCHMARK, ["A", "B"], data, Settings())
    (note,) = analysis.notes
    assert "zero in 'B' or the baseline" in note.message
    assert (note.metric, note.variant) == (RSS, "B")


def test_a_variant_with_nothing_stored_is_left_out() -> None:
    data = samples({"A": {MAXRSS_KB: 20_000.0}})
    assert analyse_rss(BENCHMARK, ["A", "B"], data, Settings()).comparisons == ()
