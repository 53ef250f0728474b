"""The profile lens: `perf record` sampled only inside the measured region, hot symbols per variant,
per-symbol deltas between variants and folded stacks for a differential flame graph.

Statements: each variant's worker runs under `perf record --control ... --delay -1` (events start
disabled); the parent enables sampling just before each timed loop and disables it right after,
through the worker's handshake. Variants alternate block by block as in the time lens, so both
profiles see the same machine state. Commands: `perf record` around the whole process.

Call graphs: DWARF unwinding by default. Frame pointers are cheaper but most distribution builds
of Python and its extensions omit them, which cuts stacks off at the first such frame; LBR gives
short (32-entry) user-space stacks and needs a real PMU. DWARF costs ~16 KB per sample, which at
~1,000 samples per variant is fine. If perf cannot record DWARF call graphs, frame pointers are
used instead; the choice made is recorded with the profile.

perf falls back from `cycles` to `cpu-clock` without a PMU (VMs) and says nothing; the event that
was really sampled is read back with `perf evlist` and reported.

The recording itself (`perf record` and `perf script`) is `measure/perf_record.py`, which the
asm lens records with too.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perflab.lenses.profile.analyse import (
    FOLDED,
    PROFILE_META,
    WALL_NS,
    analyse_profiles,
    fallback_note,
)
from perflab.lenses.profile.cost import PROFILE_PROCESSES
from perflab.machine.proc import ProcessRunner
from perflab.measure.analysis_parallel import all_cpus, run_threads, runs_real_processes
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.perf_control import find_perf
from perflab.measure.perf_record import (
    CallGraph,
    PerfData,
    ProfiledWorker,
    RecordedProfile,
    RecordOptions,
    probe_recording,
    record_command_once,
)
from perflab.measure.perf_script import (
    ProfileSample,
    folded_stacks,
)
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, WorkerWrap, loops_per_variant
from perflab.measure.worker_client import variant_environment
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    BenchmarkKind,
    Experiment,
    Metric,
    Note,
    Sample,
    Severity,
    Variant,
)


@dataclass
class _CommandRecording:
    """One variant's runs of a command under `perf record`, pooled as they come."""

    samples: list[ProfileSample] = field(default_factory=list)
    events: tuple[str, ...] = ()
    region_ns: int = 0

    def add(self, wall_ns: int, data: PerfData) -> None:
        self.samples += data.samples
        self.events = self.events or tuple(data.sampled_events)
        self.region_ns += wall_ns

    def profile(self, options: RecordOptions, runs: int) -> RecordedProfile:
        return RecordedProfile(
            options.event,
            self.events,
            options.call_graph,
            tuple(self.samples),
            runs,
            self.region_ns,
        )


# --- the lens -------------------------------------------------------------------------------


class ProfileLens:
    metric = Metric.PROFILE

    def __init__(
        self,
        *,
        region_s: float = 1.0,
        options: RecordOptions | None = None,
        max_command_runs: int = 10,
    ) -> None:
        self.region_s = region_s
        self.options = options or RecordOptions()
        self.max_command_runs = max_command_runs
        self._chosen: RecordOptions | None = None
        self._probe_events: list[str] = []

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        find_perf()
        self._chosen, self._probe_events = probe_recording(runner, self.options)
        notes = []
        if self._chosen.call_graph is not self.options.call_graph:
            notes.append(
                Note(
                    Severity.WARNING,
                    f"perf cannot record {self.options.call_graph} call graphs here; "
                    f"using {self._chosen.call_graph}",
                    metric=Metric.PROFILE,
                )
            )
        probe = RecordedProfile(self._chosen.event, tuple(self._probe_events), CallGraph.NONE, ())
        if probe.fell_back:
            notes.append(fallback_note(self._chosen.event, self._probe_events))
        return notes

    def _options(self, runner: ProcessRunner) -> RecordOptions:
        if self._chosen is None:
            self._chosen, self._probe_events = probe_recording(runner, self.options)
        return self._chosen

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        options = self._options(context.runner)
        with tempfile.TemporaryDirectory(prefix="perflab-profile-") as tmp:
            if benchmark.kind is BenchmarkKind.STATEMENT:
                profiles = self._measure_statement(benchmark, context, options, Path(tmp))
            else:
                profiles = [
                    [p] for p in self._measure_command(benchmark, context, options, Path(tmp))
                ]
        for variant, parts in zip(context.experiment.variants, profiles, strict=True):
            for generation, profile in enumerate(parts):
                self._store(benchmark, variant, profile, context, generation, len(parts))

    def _measure_statement(
        self, benchmark: Benchmark, context: LensContext, options: RecordOptions, tmp: Path
    ) -> list[list[RecordedProfile]]:
        """Each variant in `PROFILE_PROCESSES` independent workers, one generation after the
        other, each recording its share of `region_s`: per variant, one profile per worker."""
        sampler = InterleavedSampler(
            LensSession(benchmark, context, _now_ns, lens="profile"), Metric.PROFILE
        )
        recorded: list[list[RecordedProfile]] = [[] for _ in context.experiment.variants]

        def generation(number: int) -> None:
            profiles = self._statement_generation(sampler, options, tmp, number)
            for index, profile in enumerate(profiles):
                recorded[index].append(profile)

        sampler.generations(generation, at_least=PROFILE_PROCESSES, at_most=PROFILE_PROCESSES)
        return recorded

    def _statement_generation(
        self, sampler: InterleavedSampler, options: RecordOptions, tmp: Path, generation: int
    ) -> list[RecordedProfile]:
        session = sampler.session
        variants = session.variants
        workers: dict[int, ProfiledWorker] = {}

        def wrap(index: int) -> WorkerWrap:
            workers[index] = ProfiledWorker(
                session.context.runner,
                options=options,
                data_path=tmp / f"{variants[index].name}-{generation}.perf.data",
            )
            return workers[index].wrap

        with session.generation(wrap=wrap) as started:
            for index, worker in enumerate(started):
                workers[index].started(worker)
            profiled = [workers[i] for i in range(len(variants))]
            self._sample_generation(sampler, profiled, generation)
            for one in profiled:
                one.note_mapped_objects()
        # closed: every perf record has written its data, and nothing is measured any more, so
        # the variants' perf script runs may share every CPU
        with all_cpus():
            return run_threads(
                [one.recorded for one in profiled],
                parallel=runs_real_processes(session.context.runner),
            )

    def _sample_generation(
        self, sampler: InterleavedSampler, workers: Sequence[ProfiledWorker], generation: int
    ) -> None:
        """Blocks of this generation until every variant recorded its share of `region_s`
        (warm-up blocks are sampled, not recorded)."""
        settings = sampler.session.settings
        loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
        region_s = self.region_s / PROFILE_PROCESSES

        def measure(slot: Slot) -> None:
            own = loops[slot.variant]
            measured = workers[slot.variant].sample(own, record=not slot.warmup)
            sampler.session.context.sink.add_sample(
                sampler.sample(slot, WALL_NS, measured.wall_ns, loops=own, cpu=measured.cpu)
            )

        def enough(blocks: int) -> bool:
            recorded_s = min(w.region_ns for w in workers) / 1e9
            done_s = generation * region_s + recorded_s
            sampler.progress(
                f"process {generation + 1} of {PROFILE_PROCESSES}, block {blocks}, "
                f"{done_s:.1f} s recorded per variant",
                min(1.0, done_s / self.region_s),
            )
            return recorded_s >= region_s

        sampler.blocks(measure, generation=generation, enough=enough)

    def _measure_command(
        self, benchmark: Benchmark, context: LensContext, options: RecordOptions, tmp: Path
    ) -> list[RecordedProfile]:
        """Blocks of one run per variant under `perf record`, until every variant recorded
        `region_s` or `max_command_runs` blocks ran: per variant, the runs' samples pooled."""
        perf = find_perf()
        variants = context.experiment.variants
        sampler = InterleavedSampler(
            LensSession(benchmark, context, _now_ns, lens="profile"), Metric.PROFILE
        )
        recordings = [_CommandRecording() for _ in variants]

        def measure(slot: Slot) -> None:
            variant = variants[slot.variant]
            wall_ns, data = record_command_once(
                context.runner,
                perf,
                options,
                command_argv(benchmark.command_for(variant)),
                variant_environment(variant),
                variant.cwd,
                context.cpu,
                tmp / f"{slot.variant}-{slot.block}.data",
                context.experiment.settings.sample_timeout_s,
            )
            recordings[slot.variant].add(wall_ns, data)
            context.sink.add_sample(
                Sample(
                    benchmark=benchmark.name,
                    variant=variant.name,
                    metric=Metric.PROFILE,
                    name=WALL_NS,
                    value=wall_ns,
                    block=slot.block,
                    position=slot.position,
                )
            )

        def enough(runs: int) -> bool:
            recorded_ns = min(r.region_ns for r in recordings)
            return recorded_ns >= self.region_s * 1e9 or runs >= self.max_command_runs

        runs = sampler.blocks(measure, enough=enough)
        return [recording.profile(options, runs) for recording in recordings]

    def _store(
        self,
        benchmark: Benchmark,
        variant: Variant,
        profile: RecordedProfile,
        context: LensContext,
        generation: int = 0,
        processes: int = 1,
    ) -> None:
        sink = context.sink
        for kind, content in (
            (FOLDED, folded_stacks(profile.samples)),
            (PROFILE_META, json.dumps(profile.meta())),
        ):
            sink.add_artifact(
                Artifact(benchmark.name, variant.name, Metric.PROFILE, kind, content, generation)
            )
        if not profile.samples:
            sink.add_note(
                Note(
                    Severity.WARNING,
                    "perf recorded no samples inside the measured region"
                    + (
                        f" of worker process {generation + 1} of {processes}"
                        if processes > 1
                        else ""
                    ),
                    hint="the region is too short: raise the profile duration",
                    benchmark=benchmark.name,
                    variant=variant.name,
                    metric=Metric.PROFILE,
                )
            )

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_profiles(benchmark, variants, data, experiment)


def _now_ns() -> int:
    return time.monotonic_ns()
