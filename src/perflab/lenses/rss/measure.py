"""The rss lens: how much memory each variant needs (measure/peak_memory/sessions.py measures it, in
fresh workers per generation for statements, as wait4's peak RSS per run for commands)."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.rss.analyse import analyse_rss
from perflab.lenses.rss.metric import RSS
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.peak_memory.sessions import measure_peak_memory
from perflab.records.model import Benchmark, BenchmarkData, Experiment, Note
from perflab.stats.family import family_settings


class RssLens:
    """The rss lens: peak resident memory and peak allocated bytes of each variant's benchmark."""

    metric = RSS

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        measure_peak_memory(benchmark, context, metric=RSS)

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_rss(benchmark, variants, data, family_settings(experiment))
