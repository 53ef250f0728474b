"""The rss lens's analysis: the peak-memory analysis (tool_output/peak_memory.py) filed
under `rss`."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.rss.metric import RSS
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.model import Benchmark
from perflab.records.settings import Settings
from perflab.tool_output.peak_memory import analyse_peak_memory

# where tracemalloc's peak is not the memory change: where the footprint, and what the loop
# moves, are read instead
_TRACEMALLOC_BLIND_HINT = (
    "peak RSS is the footprint; the memory lens counts the bytes the loop moves"
)


def analyse_rss(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: per measure, each variant against the baseline; a lone variant's
    own peak RSS."""
    peak = analyse_peak_memory(
        benchmark, variants, data, settings, metric=RSS, blind_hint=_TRACEMALLOC_BLIND_HINT
    )
    return LensAnalysis(peak.comparisons, peak.notes, measurements=peak.measurements)
