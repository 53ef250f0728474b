"""The time lens: wall time in a paired, interleaved design across worker generations.

Statements: per generation, one fresh worker per variant, all pinned to the same CPU; short
calibrated samples alternate between the variants (ABBA for two). When the set-up's imports are
expensive (`import torch`), the plan says so (`LensContext.server_rounds`): then each *round*
starts one fork server per variant, which imports them once, and forks a few generations'
workers from it; the interval is over rounds. Commands: every sample is one run of the command,
alternated the same way. See docs/statistics.md for why.
"""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.time.analyse import analyse_time
from perflab.lenses.time.bookkeeping import TimeBookkeeping
from perflab.lenses.time.commands import TimeCommandSession
from perflab.lenses.time.metric import TIME
from perflab.lenses.time.statements import TimeStatementSession
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.session import LensSession
from perflab.records.errors import VariantsFailed
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, BenchmarkData, Experiment, Note
from perflab.stats.family import run_family_size


class TimeLens:
    """The time lens: wall time per iteration, statements in workers and commands in a launcher, in
    interleaved generations."""

    metric = TIME

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        book = TimeBookkeeping(LensSession(benchmark, context, metric=TIME))
        session: TimeStatementSession | TimeCommandSession
        if benchmark.kind is BenchmarkKind.STATEMENT:
            session = TimeStatementSession(book)
        else:
            session = TimeCommandSession(book)
        book.other_runs_on_cpu()
        session.run()
        book.note_overrun()
        book.note_early_stop()
        if book.failed:
            raise VariantsFailed(list(book.failed.values()))

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_time(
            benchmark,
            variants,
            data,
            experiment.settings,
            family=run_family_size(experiment),
            order=[v.name for v in experiment.variants],
        )
