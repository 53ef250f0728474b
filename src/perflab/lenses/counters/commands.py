"""The counters lens on commands: `perf stat` around each whole run of the command; every run is
its own sample, paired by block."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from perflab.lenses.counters.samples import counters_sampler, precise_enough, store_counts
from perflab.machine.proc import LaunchSpec
from perflab.machine.scratch import private_folder
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensContext
from perflab.measure.sampler import Slot
from perflab.measure.worker_client import variant_environment
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark
from perflab.tool_drivers.perf import stat_argv
from perflab.tool_output.perf_stat import counts_for_requested, parse_stat_csv


class CountersCommandSession:
    """The counters lens on a command benchmark: interleaved blocks of one run per variant under
    perf stat, until the stopping rule or the budget ends them."""

    def __init__(
        self,
        benchmark: Benchmark,
        context: LensContext,
        *,
        events: Sequence[str],
        perf: str,
        max_generations: int,
    ) -> None:
        self.benchmark = benchmark
        self.context = context
        self.events = events
        self.perf = perf
        self.max_generations = max_generations
        self.sampler = counters_sampler(benchmark, context)

    def run(self) -> None:
        sampler, benchmark, context = self.sampler, self.benchmark, self.context
        settings = context.experiment.settings

        def enough(blocks: int) -> bool:
            return blocks >= settings.min_command_blocks and (
                sampler.out_of_budget()
                or blocks >= settings.warmup_blocks + self.max_generations
                or precise_enough(benchmark, context)
            )

        with private_folder("counters") as tmp:
            sampler.blocks(lambda slot: self._count_command(Path(tmp), slot), enough=enough)

    def _count_command(self, tmp: Path, slot: Slot) -> None:
        """One run of the command under `perf stat`, its counts stored as the slot's samples."""
        benchmark, context, events = self.benchmark, self.context, self.events
        variant = context.experiment.variants[slot.variant]
        output = tmp / f"{slot.block}-{slot.variant}.csv"
        argv = command_argv(benchmark.command_for(variant), shell=context.experiment.settings.shell)
        spec = LaunchSpec(
            argv=(*stat_argv(self.perf, events, output=output), *argv),
            env=variant_environment(variant),
            cwd=variant.cwd,
            cpu=context.cpu,
        )
        result = context.runner.run(spec, timeout_s=context.experiment.settings.sample_timeout_s)
        if not result.ok:
            raise BenchmarkFailedError(
                f"the command under perf stat {result.describe_failure()}",
                detail=result.stderr[-2000:],
                variant=variant.name,
                benchmark=benchmark.name,
            )
        counts = counts_for_requested(parse_stat_csv(output.read_text()), events)
        store_counts(benchmark, context, slot, events, counts, loops=1)
