"""The rss lens's analysis: the peak-memory analysis (measure/peak_memory/analyse.py) filed
under `rss`."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.rss.metric import RSS
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.measure.peak_memory.analyse import analyse_peak_memory
from perflab.records.model import Benchmark
from perflab.records.settings import Settings


def analyse_rss(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: per measure, each variant against the baseline; a lone variant's
    own peak RSS."""
    peak = analyse_peak_memory(benchmark, variants, data, settings, metric=RSS)
    return LensAnalysis(peak.comparisons, peak.notes, measurements=peak.measurements)
