"""The counters lens on statements: each variant's worker under perf stat, counting only inside
its timed loops, one total per event for each variant and generation.

Every variant's worker runs under
`perf stat -x, -o FILE --control fd:CTL,ACK --delay -1 -e EVENTS --`: the events start disabled,
and the parent enables them just before each timed loop and disables them right after (through
the worker's handshake). Variants alternate block by block inside a generation of workers, as in
the time lens. perf stat only prints totals when it exits, so each (variant, generation) yields
one total per event over all of its measured samples, stored as one Sample with `loops` = all
iterations counted. That is the right granularity, not a compromise: the paired statistics put
the confidence interval over generations anyway (per-process effects are the dominant noise), and
the workers of one generation run interleaved over the same stretch of time, so drift hits both.
Interval mode (`-I`) cannot be lined up with samples (perf 6.1 does not print on enable/disable),
and a perf process per sample would cost more than the sample. So: several short generations."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from perflab.lenses.counters.avx512 import AVX512, Avx512Tally
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.samples import counters_sampler, precise_enough, store_counts
from perflab.machine.scratch import private_folder
from perflab.measure.lens import LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, WorkerWrap, loops_per_variant
from perflab.measure.worker_client import StatementWorker
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Artifact, Benchmark
from perflab.tool_drivers.perf import PerfControl, stat_argv
from perflab.tool_output.arch_status import parse_arch_status
from perflab.tool_output.perf_stat import counts_for_requested, parse_stat_csv


class _CountedWorker:
    """A statement worker under `perf stat`, counting only inside the timed loop: the wrap
    the session starts the worker with, then the worker, its iterations and AVX-512 tally."""

    def __init__(self, events: Sequence[str], output: Path, perf: str) -> None:
        self.output = output
        self.control = PerfControl()
        self.wrap = WorkerWrap(
            argv_prefix=stat_argv(perf, events, output=output, control=self.control),
            pass_fds=tuple(self.control.pass_fds),
            after_spawn=self.control.after_spawn,
            release=self.control.close,
        )
        self._worker: StatementWorker | None = None
        self.loops = 0
        self.avx = Avx512Tally()

    @property
    def worker(self) -> StatementWorker:
        assert self._worker is not None, "the session has not started this worker"
        return self._worker

    def started(self, worker: StatementWorker) -> None:
        self._worker = worker

    def output_text(self) -> str:
        """What perf stat wrote once its worker was closed."""
        try:
            return self.output.read_text()
        except OSError as error:
            raise BenchmarkFailedError(
                f"perf stat wrote no output ({error})",
                hint="perf stat exits early when the worker cannot start; run the statement alone",
            ) from error


class _CountingRun:
    """One statement's counting across its generations: the sampler, the events and perf, the
    folder perf writes its counts to, each variant's loops (calibrated in the first generation)
    and the generation's workers under perf stat, made as the session wraps them."""

    def __init__(
        self,
        sampler: InterleavedSampler[LensSession],
        events: Sequence[str],
        perf: str,
        folder: Path,
    ) -> None:
        self.sampler = sampler
        self.events = events
        self.perf = perf
        self.folder = folder
        self.loops: list[int] | None = None
        self.counted: dict[int, _CountedWorker] = {}
        self._number = 0  # the generation being started

    def begin(self, generation: int) -> dict[int, _CountedWorker]:
        """A new generation: its workers, filled by `wrap` as the session starts them."""
        self._number = generation
        self.counted = {}
        return self.counted

    def wrap(self, index: int) -> WorkerWrap:
        """The wrap variant `index`'s worker starts under: perf stat, counting into its file."""
        output = self.folder / f"{self._number}-{index}.csv"
        self.counted[index] = _CountedWorker(self.events, output, self.perf)
        return self.counted[index].wrap


class CountersStatementSession:
    """The counters lens on a statement benchmark: generations of workers under perf stat, one
    per variant, interleaved block by block, until the stopping rule or the budget ends them.
    `arch_status` reads a worker's /proc/PID/arch_status (injectable for tests)."""

    def __init__(
        self,
        benchmark: Benchmark,
        context: LensContext,
        *,
        events: Sequence[str],
        perf: str,
        blocks_per_generation: int,
        max_generations: int,
        arch_status: Callable[[int], str | None],
    ) -> None:
        self.benchmark = benchmark
        self.context = context
        self.events = events
        self.perf = perf
        self.blocks_per_generation = blocks_per_generation
        self.max_generations = max_generations
        self.arch_status = arch_status
        self.sampler = counters_sampler(benchmark, context)

    def run(self) -> None:
        sampler, benchmark, context = self.sampler, self.benchmark, self.context

        def enough(generations: int) -> bool:
            return (
                sampler.out_of_budget()
                or generations >= self.max_generations
                or precise_enough(benchmark, context)
            )

        with private_folder("counters") as tmp:
            run = _CountingRun(sampler, self.events, self.perf, Path(tmp))
            sampler.generations(
                lambda number: self._generation(run, number),
                at_least=max(context.experiment.settings.min_generations, 2),
                enough=enough,
                label="perf stat",
            )

    def _generation(self, run: _CountingRun, generation: int) -> None:
        session = run.sampler.session
        benchmark, context, settings = session.benchmark, session.context, session.settings
        counted = run.begin(generation)
        with session.generation(wrap=run.wrap) as workers:
            for index, worker in enumerate(workers):
                counted[index].started(worker)
            calibrated = (
                run.loops
                if run.loops is not None
                else loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
            )
            run.sampler.blocks(
                lambda slot: self._sample(
                    counted[slot.variant], calibrated[slot.variant], measured=not slot.warmup
                ),
                generation=generation,
                blocks=settings.warmup_blocks + self.blocks_per_generation,
            )
            for index in counted:
                self._control_sample(counted[index], calibrated[index])
        # closed: every perf stat has written its counts
        outputs = {index: counted[index].output_text() for index in counted}
        for position, index in enumerate(sorted(outputs)):
            slot = Slot(index, generation, 0, position, warmup=False)
            self._store_generation(
                benchmark, context, slot, run.events, outputs[index], counted[index]
            )
        run.loops = calibrated  # a generation that completed calibrated the next ones

    def _sample(self, counted: _CountedWorker, loops: int, *, measured: bool) -> None:
        if not measured:
            counted.worker.sample(loops)
            return
        control = counted.control
        result = counted.worker.sample(
            loops, on_region_start=control.enable, on_region_end=control.disable
        )
        counted.loops += loops
        counted.avx.add(
            parse_arch_status(self.arch_status(counted.worker.pid)), result.wall_ns / 1e6
        )

    def _control_sample(self, counted: _CountedWorker, loops: int) -> None:
        result = counted.worker.sample(loops, empty=True)
        counted.avx.add(
            parse_arch_status(self.arch_status(counted.worker.pid)),
            result.wall_ns / 1e6,
            control=True,
        )

    def _store_generation(
        self,
        benchmark: Benchmark,
        context: LensContext,
        slot: Slot,
        events: Sequence[str],
        output: str,
        counted: _CountedWorker,
    ) -> None:
        """A worker's counts over its generation (`slot`: its variant and place, one block)."""
        counts = counts_for_requested(parse_stat_csv(output), events)
        store_counts(benchmark, context, slot, events, counts, loops=counted.loops)
        avx = counted.avx
        context.sink.add_artifact(
            Artifact(
                benchmark.name,
                context.experiment.variants[slot.variant].name,
                COUNTERS,
                AVX512,
                json.dumps(avx.to_json()),
                generation=slot.generation,
            )
        )
