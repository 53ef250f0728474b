"""The counters lens: `perf stat` events of the measured region only, compared between variants
with the same paired, generation-level statistics as the time lens.

Statements. Every variant's worker runs under
`perf stat -x, -o FILE --control fd:CTL,ACK --delay -1 -e EVENTS --`: the events start disabled,
and the parent enables them just before each timed loop and disables them right after (through
the worker's handshake). Variants alternate block by block inside a generation of workers, as in
the time lens. perf stat only prints totals when it exits, so each (variant, generation) yields
one total per event over all of its measured samples, stored as one Sample with `loops` = all
iterations counted. That is the right granularity, not a compromise: the paired statistics put
the confidence interval over generations anyway (per-process effects are the dominant noise), and
the workers of one generation run interleaved over the same stretch of time, so drift hits both.
Interval mode (`-I`) cannot be lined up with samples (perf 6.1 does not print on enable/disable),
and a perf process per sample would cost more than the sample. So: several short generations.

Commands. `perf stat` around each whole run; every run is its own sample, paired by block.

Availability. Before measuring, the events are tried on `true`: an unknown name (perf exits 129)
is identified and dropped, `<not supported>` events (a VM without a PMU) are dropped, and the
run goes on with the rest. Each missing event is reported with a reason and a fix. Events that
are never counted (`<not counted>`) in any generation are reported too; multiplexed events are
kept, with the smallest running fraction seen.

AVX-512. Without counters, `/proc/PID/arch_status` (AVX512_elapsed_ms) says when the kernel last
saw live AVX-512 register state at a context switch. It is read after each measured region and
after one empty-loop control sample per worker: if the control shows AVX-512 too, something
besides the statement (glibc's EVEX string functions use zmm16-31) sets it, and the check
cannot attribute it to the statement.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perflab.lenses.counters.analyse import (
    AVAILABILITY,
    AVX512,
    PROBE,
    HostFacts,
    analyse_counters,
    event_confidence,
    requested_events,
    user_only_note,
)
from perflab.lenses.counters.findings import UnavailableEvent
from perflab.lenses.counters.host import host_facts
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.probe import probe_events
from perflab.machine.host import read_text
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.commands import command_argv
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, WorkerWrap, loops_per_variant
from perflab.measure.worker_client import StatementWorker, variant_environment
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Sample, Severity
from perflab.stats.family import run_family_size
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.tool_drivers.perf import PerfControl, find_perf, stat_argv
from perflab.tool_output.arch_status import parse_arch_status
from perflab.tool_output.perf_stat import (
    Availability,
    EventCount,
    counts_for_requested,
    parse_stat_csv,
)

_AVX512_SLACK_MS = 20.0  # the kernel stamps in jiffies (up to 10 ms) at the next context switch
_PRECISION_MIN_COUNT = 10_000  # per sample; below this an event does not steer the stopping rule


def read_arch_status(pid: int) -> str | None:
    return read_text(f"/proc/{pid}/arch_status")


@dataclass
class _AvxTally:
    samples: int = 0
    with_avx512: int = 0
    control_samples: int = 0
    control_with_avx512: int = 0
    supported: bool = True

    def add(self, elapsed_ms: int | None, region_ms: float, *, control: bool = False) -> None:
        if elapsed_ms is None:
            self.supported = False
            return
        seen = 0 <= elapsed_ms <= region_ms + _AVX512_SLACK_MS
        if control:
            self.control_samples += 1
            self.control_with_avx512 += seen
        else:
            self.samples += 1
            self.with_avx512 += seen


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
        self.avx = _AvxTally()

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


def events_within_precision(data: BenchmarkData, experiment: Experiment) -> bool:
    """--precision's early stop: every event's ratio of every variant to the baseline is known
    to within `target_precision`, at the level the events are decided at once analysed."""
    target = experiment.settings.target_precision
    variants = [v.name for v in experiment.variants]
    names = {s.name for s in data.samples}
    # the level the events are decided at (their family's): a stop at 95% would leave them
    # wider than the target once analysed
    level = event_confidence(
        experiment.settings.confidence, len(names), run_family_size(experiment)
    )
    for name in names:
        base = data.samples_of(variants[0], name)
        if sum(s.value for s in base) < _PRECISION_MIN_COUNT * max(len(base), 1):
            # rare events (a few context switches) are Poisson noise: they never settle
            continue
        for other in variants[1:]:
            pairs = pair_samples(base, data.samples_of(other, name))
            estimate = estimate_ratio(pairs, confidence=level)
            if estimate.n_groups >= 2 and estimate.log_half_width > target:
                return False
    return True


class CountersLens:
    """The counters lens: hardware events counted with perf stat around each variant's measured
    region, in interleaved generations."""

    metric = COUNTERS

    def __init__(
        self,
        *,
        blocks_per_generation: int = 10,
        max_generations: int = 30,
        arch_status: Callable[[int], str | None] = read_arch_status,
        facts: HostFacts | None = None,
    ) -> None:
        self.blocks_per_generation = blocks_per_generation
        self.max_generations = max_generations
        self.arch_status = arch_status
        self.facts = facts
        self._probed: dict[tuple[str, ...], tuple[list[str], list[UnavailableEvent], bool]] = {}

    def _probe(
        self, runner: ProcessRunner, events: Sequence[str]
    ) -> tuple[list[str], list[UnavailableEvent], bool]:
        key = tuple(events)
        if key not in self._probed:
            self._probed[key] = probe_events(runner, events, facts=self.facts or host_facts())
        return self._probed[key]

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        find_perf(runner)
        events = requested_events(experiment.settings)
        usable, unavailable, user_only = self._probe(runner, events)
        if not usable:
            raise ToolUnavailableError(
                "none of the requested events can be counted here: "
                + ", ".join(f"{u.event} ({u.reason})" for u in unavailable),
                hint=unavailable[0].hint if unavailable else None,
            )
        notes = [
            Note(
                Severity.WARNING,
                f"event {u.event!r} is unavailable: {u.reason}",
                hint=u.hint,
                metric=COUNTERS,
            )
            for u in unavailable
        ]
        if user_only:
            notes.append(user_only_note(None))
        return notes

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        events = requested_events(context.experiment.settings)
        usable, unavailable, _ = self._probe(context.runner, events)
        baseline = context.experiment.baseline.name
        facts = self.facts or host_facts()
        probe = {"unavailable": [u.to_json() for u in unavailable], "facts": asdict(facts)}
        context.sink.add_artifact(
            Artifact(benchmark.name, baseline, COUNTERS, PROBE, json.dumps(probe))
        )
        if not usable:
            return
        perf = find_perf(context.runner)
        if benchmark.kind is BenchmarkKind.STATEMENT:
            self._measure_statement(benchmark, context, usable, perf)
        else:
            self._measure_command(benchmark, context, usable, perf)

    # statements ------------------------------------------------------------------------------

    def _measure_statement(
        self, benchmark: Benchmark, context: LensContext, events: Sequence[str], perf: str
    ) -> None:
        session = LensSession(benchmark, context, schedule="counters")
        sampler = InterleavedSampler(session, COUNTERS)

        def enough(generations: int) -> bool:
            return (
                sampler.out_of_budget()
                or generations >= self.max_generations
                or events_within_precision(
                    context.sink.data_for(benchmark.name, COUNTERS), context.experiment
                )
            )

        with private_folder("counters") as tmp:
            run = _CountingRun(sampler, events, perf, Path(tmp))
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
        self._store_counts(benchmark, context, slot, events, counts, counted.loops)
        avx = counted.avx
        context.sink.add_artifact(
            Artifact(
                benchmark.name,
                context.experiment.variants[slot.variant].name,
                COUNTERS,
                AVX512,
                json.dumps(
                    {
                        "supported": avx.supported,
                        "samples": avx.samples,
                        "with_avx512": avx.with_avx512,
                        "control_samples": avx.control_samples,
                        "control_with_avx512": avx.control_with_avx512,
                    }
                ),
                generation=slot.generation,
            )
        )

    def _store_counts(
        self,
        benchmark: Benchmark,
        context: LensContext,
        slot: Slot,
        events: Sequence[str],
        counts: Mapping[str, EventCount],
        loops: int,
    ) -> None:
        """The usable counts as the slot's samples, and every event's availability."""
        variant = context.experiment.variants[slot.variant].name
        availability: dict[str, Any] = {}
        for event in events:
            count = counts.get(event)
            if count is None:
                availability[event] = {"availability": str(Availability.NOT_COUNTED)}
                continue
            availability[event] = {
                "availability": str(count.availability),
                "running_fraction": count.running_fraction,
                "user_only": count.user_only,
                "unit": count.unit,
            }
            if count.availability.usable and count.value is not None:
                context.sink.add_sample(
                    Sample(
                        benchmark=benchmark.name,
                        variant=variant,
                        metric=COUNTERS,
                        name=event,
                        value=count.value,
                        loops=max(loops, 1),
                        generation=slot.generation,
                        block=slot.block,
                        position=slot.position,
                        warmup=slot.warmup,
                    )
                )
        context.sink.add_artifact(
            Artifact(
                benchmark.name,
                variant,
                COUNTERS,
                AVAILABILITY,
                json.dumps(availability),
                generation=slot.generation or slot.block,  # one of the two is always 0
            )
        )

    # commands --------------------------------------------------------------------------------

    def _measure_command(
        self, benchmark: Benchmark, context: LensContext, events: Sequence[str], perf: str
    ) -> None:
        settings = context.experiment.settings
        sampler = InterleavedSampler(LensSession(benchmark, context, schedule="counters"), COUNTERS)

        def enough(blocks: int) -> bool:
            return blocks >= settings.min_command_blocks and (
                sampler.out_of_budget()
                or blocks >= settings.warmup_blocks + self.max_generations
                or events_within_precision(
                    context.sink.data_for(benchmark.name, COUNTERS), context.experiment
                )
            )

        with private_folder("counters") as tmp:
            sampler.blocks(
                lambda slot: self._count_command(sampler, events, perf, Path(tmp), slot),
                enough=enough,
            )

    def _count_command(
        self,
        sampler: InterleavedSampler[LensSession],
        events: Sequence[str],
        perf: str,
        tmp: Path,
        slot: Slot,
    ) -> None:
        """One run of the command under `perf stat`, its counts stored as the slot's samples."""
        benchmark, context = sampler.session.benchmark, sampler.session.context
        variant = context.experiment.variants[slot.variant]
        output = tmp / f"{slot.block}-{slot.variant}.csv"
        argv = command_argv(benchmark.command_for(variant), shell=context.experiment.settings.shell)
        spec = LaunchSpec(
            argv=(*stat_argv(perf, events, output=output), *argv),
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
        self._store_counts(benchmark, context, slot, events, counts, 1)

    # analysis --------------------------------------------------------------------------------

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_counters(benchmark, variants, data, experiment)
