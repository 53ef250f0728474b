"""The rss lens's analysis: the peak-memory analysis (tool_output/peak_memory.py) filed
under `rss`."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.rss import RSS
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.model import Benchmark
from perflab.records.settings import Settings
from perflab.tool_output.peak_memory import analyse_peak_memory


def analyse_rss(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: per measure, each variant against the baseline."""
    peak = analyse_peak_memory(benchmark, variants, data, settings, metric=RSS)
    return LensAnalysis(peak.comparisons, peak.notes)
