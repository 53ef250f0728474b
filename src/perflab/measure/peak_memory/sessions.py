"""Peak memory per variant: the rss lens's measurement, and the memory lens's footprint.

Statements: in fresh workers per generation (as the lenses' other workers), a worker op
(`worker/peak_memory_ops.py`) runs the loop and reports the worker's peak resident set size, the
peak of memory allocated while the loop ran (tracemalloc), and the memory blocks the loop left
allocated per iteration (a leak grows them). Commands: the peak RSS of each run, as `wait4` reports
it to the command launcher. Variants alternate in blocks, the first block of each generation warms
up; the ratio and its CI are over generations (statements) or blocks (commands, each run its own
process), like the time lens's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from perflab.measure.commands import CommandLauncher, CommandRun, command_argv
from perflab.measure.lens import LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession
from perflab.measure.worker_client import StatementWorker, WorkerOps, variant_environment
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Sample
from perflab.tool_output.peak_memory import FLOOR_KB, MAXRSS_KB, NET_BLOCKS, PEAK_ALLOC_BYTES

MAX_LOOPS = 1000  # tracemalloc slows every allocation: keep one sample short
WORKER_OPS = "perflab.worker.peak_memory_ops"  # the `rss_sample` op, run in the workers


@dataclass(frozen=True)
class RssReading:
    """One peak-memory reading of a worker after `loops` iterations: peak RSS, peak allocated bytes
    and blocks still allocated."""

    loops: int
    maxrss_kb: int | None
    peak_alloc_bytes: int
    net_blocks: int


def measure_peak_memory(
    benchmark: Benchmark,
    context: LensContext,
    *,
    metric: Metric,
    progress_label: str = "memory",
) -> None:
    """Every variant's peak memory, its samples, notes and progress filed under `metric` (the
    measuring lens's); the progress line names each generation after `progress_label`."""
    session = LensSession(benchmark, context, metric=metric)  # notes under `metric`
    if benchmark.kind is BenchmarkKind.STATEMENT:
        _PeakMemoryStatementSession(session, metric, progress_label).run()
    else:
        _PeakMemoryCommandSession(session, metric).run()


def rss_sample(worker: StatementWorker, loops: int) -> RssReading:
    """The lens's own request to a worker, and its reply parsed."""
    reply = worker.call({"op": "rss_sample", "loops": loops})
    if not reply.get("ok"):
        raise worker.failure(reply)
    try:
        maxrss = reply.get("maxrss_kb")
        return RssReading(
            loops=int(reply["loops"]),
            maxrss_kb=None if maxrss is None else int(maxrss),
            peak_alloc_bytes=int(reply["peak_alloc_bytes"]),
            net_blocks=int(reply["net_blocks"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise worker.error(
            "the worker's memory reading could not be read", detail=repr(reply)
        ) from error


# --------------------------------------------------------------------------------------------
# measuring


class _PeakMemoryStatementSession:
    """Generations of workers (fresh or forked), sampled in blocks by the `rss_sample` op."""

    def __init__(self, session: LensSession, filed_under: Metric, progress_label: str) -> None:
        self.session = session
        self.filed_under = filed_under  # the metric of the samples
        self.progress_label = progress_label

    def run(self) -> None:
        # the first block of each generation warms up (first-use allocations)
        sampler = InterleavedSampler(self.session, self.filed_under, warmup_blocks=1)
        self._loops: int | None = None
        generations = max(2, self.session.settings.min_generations)  # a CI needs two
        sampler.generations(
            lambda generation: self._generation(sampler, generation),
            at_least=generations,
            at_most=generations,
            label=self.progress_label,
        )

    def _generation(self, sampler: InterleavedSampler[LensSession], generation: int) -> None:
        with self.session.generation(ops=(WorkerOps.from_module(WORKER_OPS),)) as workers:
            if self._loops is None:
                # every variant calibrates (one may be far slower than another); all run the
                # slowest one's count, so peaks over the same number of iterations compare,
                # and no sample runs far beyond --sample-ms
                target_ns = int(self.session.settings.sample_target_ms * 1e6)
                self._loops = min(MAX_LOOPS, *(worker.calibrate(target_ns) for worker in workers))
            loops = self._loops
            sampler.blocks(
                lambda slot: self._sample(sampler, workers[slot.variant], loops, slot),
                generation=generation,
                blocks=2,
            )

    def _sample(
        self,
        sampler: InterleavedSampler[LensSession],
        worker: StatementWorker,
        loops: int,
        slot: Slot,
    ) -> None:
        reading = rss_sample(worker, loops)
        values: list[tuple[str, float, int]] = [
            (PEAK_ALLOC_BYTES, float(reading.peak_alloc_bytes), 1),
            (NET_BLOCKS, float(reading.net_blocks), reading.loops),
        ]
        if reading.maxrss_kb is not None:
            values.append((MAXRSS_KB, float(reading.maxrss_kb), 1))
        for name, value, per in values:
            self.session.context.sink.add_sample(
                sampler.sample(slot, name, value, loops=per, cpu=self.session.context.cpu)
            )


class _PeakMemoryCommandSession:
    """Every run of a command its own sample, from the command launcher's `wait4` peak RSS."""

    def __init__(self, session: LensSession, filed_under: Metric) -> None:
        self.session = session
        self.filed_under = filed_under  # the metric of the samples

    def run(self) -> None:
        # one warm-up block (page cache)
        sampler = InterleavedSampler(self.session, self.filed_under, warmup_blocks=1)
        with CommandLauncher(self.session.context.runner, cpu=self.session.context.cpu) as launcher:
            for index in range(len(self.session.variants)):
                self._record_floor(launcher, index)
            sampler.blocks(
                lambda slot: self._run_one(sampler, launcher, slot),
                blocks=1 + max(2, self.session.settings.min_generations),
            )

    def _launch(self, launcher: CommandLauncher, index: int, argv: tuple[str, ...]) -> CommandRun:
        variant = self.session.variants[index]
        return launcher.run(
            argv,
            env=variant_environment(variant),
            cwd=variant.cwd,
            timeout_s=self.session.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.session.benchmark.name,
        )

    def _record_floor(self, launcher: CommandLauncher, index: int) -> None:
        floor = self._launch(launcher, index, ("true",))
        self.session.context.sink.add_sample(
            Sample(
                benchmark=self.session.benchmark.name,
                variant=self.session.variants[index].name,
                metric=self.filed_under,
                name=FLOOR_KB,
                value=float(floor.maxrss_kb),
                cpu=floor.cpu,
            )
        )

    def _run_one(
        self,
        sampler: InterleavedSampler[LensSession],
        launcher: CommandLauncher,
        slot: Slot,
    ) -> None:
        variant = self.session.variants[slot.variant]
        argv = command_argv(
            self.session.benchmark.command_for(variant), shell=self.session.settings.shell
        )
        run = self._launch(launcher, slot.variant, argv)
        if run.timed_out or run.returncode != 0:
            raise BenchmarkFailedError(
                "the command timed out"
                if run.timed_out
                else f"the command exited with status {run.returncode}",
                hint="run it by hand in the variant's directory to see why",
                variant=variant.name,
                benchmark=self.session.benchmark.name,
                detail=run.stderr_tail.rstrip() or None,
            )
        # every run is its own process: each block is a group of its own
        own_group = dataclasses.replace(slot, generation=slot.block, block=0)
        self.session.context.sink.add_sample(
            sampler.sample(own_group, MAXRSS_KB, float(run.maxrss_kb), cpu=run.cpu)
        )
