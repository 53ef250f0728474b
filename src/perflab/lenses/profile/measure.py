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

The recording functions (`record_statement_profile`, `record_command_profile`, `ProfiledWorker`)
are public: the asm lens uses them to find hot functions and per-instruction sample counts, with
symbol-table (mangled) names (`RecordOptions(demangle=False)`) and the files the process mapped
(`RecordedProfile.objects`, from perf's mmap events and, for statements, the worker's
/proc/PID/maps).
"""

from __future__ import annotations

import enum
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.lenses.asm.elf_code import mapped_objects, read_process_maps
from perflab.lenses.profile.analyse import (
    FOLDED,
    PROFILE_META,
    WALL_NS,
    analyse_profiles,
    fallback_note,
)
from perflab.lenses.profile.perf_script import (
    HotSymbols,
    ProfileSample,
    executable_mappings,
    folded_stacks,
    hot_symbols,
    parse_evlist,
    parse_perf_script,
)
from perflab.measure.analysis_parallel import all_cpus, run_threads, runs_real_processes
from perflab.measure.commands import command_argv
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.perf_control import PerfControl, find_perf
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, WorkerWrap, loops_per_variant
from perflab.measure.worker_client import StatementWorker, WorkerSample, variant_environment
from perflab.model import (
    Artifact,
    Benchmark,
    BenchmarkKind,
    Experiment,
    Metric,
    Note,
    Sample,
    Severity,
    Variant,
)
from perflab.proc import LaunchSpec, ProcessRunner

_SCRIPT_FIELDS = "comm,pid,tid,time,event,period,ip,sym,symoff,dso"
# A statement is profiled in this many independent worker processes per variant, each recording
# its share of `region_s`: a function claimed to have appeared (disappeared) must be there in
# every one (perf_script.even_across_parts), not in one process's one-off work. 2: the fewest
# that can tell, at one more perf and interpreter start-up per variant.
PROFILE_PROCESSES = 2


class CallGraph(enum.StrEnum):
    NONE = "none"
    FP = "fp"
    DWARF = "dwarf"
    LBR = "lbr"


@dataclass(frozen=True)
class RecordOptions:
    event: str = "cycles"
    frequency_hz: int = 999  # odd, so sampling does not beat in step with a 1 kHz timer tick
    call_graph: CallGraph = CallGraph.DWARF
    dwarf_stack_bytes: int = 16384
    # A fixed period (-c) instead of a frequency: in frequency mode the kernel re-learns the
    # period after every enable, and short regions then get far fewer samples than asked for.
    period: int | None = None
    # How `perf script` names symbols: demangled for people, as in the symbol table (mangled)
    # for looking them up in ELF files.
    demangle: bool = True
    # perf record reads every loaded BPF program at start-up, for samples in BPF code that a
    # benchmark's user-space region never has: 0.6-0.9 s of each recording of a short command
    # (1.4 s -> 0.7 s here, a command recorded ten times by the asm lens). perf before 5.1 does
    # not know the option; the probe then records without it.
    no_bpf_event: bool = True

    def perf_options(self) -> tuple[str, ...]:
        rate = ("-c", str(self.period)) if self.period else ("-F", str(self.frequency_hz))
        options: tuple[str, ...] = ("-e", self.event, *rate)
        if self.no_bpf_event:
            options += ("--no-bpf-event",)
        if self.call_graph is CallGraph.DWARF:
            options += ("--call-graph", f"dwarf,{self.dwarf_stack_bytes}")
        elif self.call_graph is not CallGraph.NONE:
            options += ("--call-graph", str(self.call_graph))
        return options


@dataclass(frozen=True)
class RecordedProfile:
    """One variant's samples, with how they were taken."""

    requested_event: str
    sampled_events: tuple[str, ...]  # read back from the data file: the truth
    call_graph: CallGraph
    samples: tuple[ProfileSample, ...]
    loops: int = 0  # statement iterations inside the recorded regions (commands: runs)
    region_ns: int = 0  # wall time inside the recorded regions
    objects: tuple[str, ...] = ()  # files the process mapped executable, in load order

    @property
    def fell_back(self) -> bool:
        requested = self.requested_event.split(":")[0]
        return bool(self.sampled_events) and all(
            e.split(":")[0] != requested for e in self.sampled_events
        )

    def hot_symbols(self) -> HotSymbols:
        return hot_symbols(self.samples)

    def meta(self) -> dict[str, Any]:
        return {
            "requested_event": self.requested_event,
            "sampled_events": list(self.sampled_events),
            "fell_back": self.fell_back,
            "call_graph": str(self.call_graph),
            "samples": len(self.samples),
            "loops": self.loops,
            "region_ns": self.region_ns,
        }


@dataclass(frozen=True)
class PerfData:
    """What one perf.data file says: its samples, the events really sampled and the files mapped
    executable while perf recorded (its mmap events)."""

    samples: tuple[ProfileSample, ...]
    sampled_events: tuple[str, ...]
    objects: tuple[str, ...]


def read_profile(
    runner: ProcessRunner,
    data_path: Path,
    *,
    perf: str,
    demangle: bool = True,
    timeout_s: float = 300.0,
) -> PerfData:
    """Samples and mappings (via `perf script`) and the events really sampled (`perf evlist`)."""
    evlist = runner.run(LaunchSpec(argv=(perf, "evlist", "-i", str(data_path))), timeout_s=60)
    naming = () if demangle else ("--no-demangle",)
    argv = (perf, "script", "-i", str(data_path), "--no-inline", *naming, "--show-mmap-events")
    script = runner.run(LaunchSpec(argv=(*argv, "-F", _SCRIPT_FIELDS)), timeout_s=timeout_s)
    if not script.ok:
        raise ToolUnavailableError(
            f"perf script could not read the profile ({script.describe_failure()})",
            detail=script.stderr[-2000:],
            hint="check that the perf.data was written completely (disk space) and perf works",
        )
    return PerfData(
        samples=tuple(parse_perf_script(script.stdout)),
        sampled_events=tuple(parse_evlist(evlist.stdout) if evlist.ok else ()),
        objects=executable_mappings(script.stdout),
    )


# What `perf record` accepts on this machine does not change while perflab runs, and each probe
# costs 0.5-1.5 s (perf starts twice): real probes are made once per process, per perf and
# options, and their answer reused (the asm and profile lenses probed three times per run). Only
# an answer is kept, never a refusal. A fake runner's machine is its own: never remembered.
_PROBED: dict[tuple[str, RecordOptions], tuple[RecordOptions, tuple[str, ...]]] = {}


def probe_recording(
    runner: ProcessRunner, options: RecordOptions, *, perf: str | None = None
) -> tuple[RecordOptions, list[str]]:
    """Record `true` with these options; fall back DWARF -> frame pointers -> none if perf
    refuses. Returns the options that work and the event perf really sampled."""
    perf = perf or find_perf()
    remember = runs_real_processes(runner)
    known = _PROBED.get((perf, options)) if remember else None
    if known is None:
        known = _probe_recording(runner, options, perf)
        if remember:
            _PROBED[(perf, options)] = known
    chosen, events = known
    return chosen, list(events)


def _probe_recording(
    runner: ProcessRunner, options: RecordOptions, perf: str
) -> tuple[RecordOptions, tuple[str, ...]]:
    candidates = [options]
    if options.call_graph in (CallGraph.DWARF, CallGraph.LBR):
        candidates.append(replace(options, call_graph=CallGraph.FP))
    if options.call_graph is not CallGraph.NONE:
        candidates.append(replace(options, call_graph=CallGraph.NONE))
    if options.no_bpf_event:  # an older perf: the same, with BPF events
        candidates += [replace(c, no_bpf_event=False) for c in candidates]
    last_error = ""
    with tempfile.TemporaryDirectory(prefix="perflab-probe-") as tmp:
        data = Path(tmp) / "probe.data"
        for candidate in candidates:
            argv = (perf, "record", "-q", "-o", str(data), *candidate.perf_options(), "--", "true")
            result = runner.run(LaunchSpec(argv=argv), timeout_s=60)
            if result.ok:
                evlist = runner.run(
                    LaunchSpec(argv=(perf, "evlist", "-i", str(data))), timeout_s=60
                )
                return candidate, tuple(parse_evlist(evlist.stdout) if evlist.ok else ())
            last_error = result.stderr
    raise ToolUnavailableError(
        f"perf record cannot sample {options.event!r} here",
        detail=last_error[-2000:],
        hint="check `perf record -e cpu-clock -- true`; as non-root, lower "
        "kernel.perf_event_paranoid (sudo sysctl kernel.perf_event_paranoid=1) or grant "
        "CAP_PERFMON",
    )


class ProfiledWorker:
    """A statement worker under `perf record`, sampling only while `sample()` runs the loop:
    the wrap its worker starts with (a `LensSession` starts it, or `start` alone), then the
    worker and what it recorded."""

    def __init__(
        self,
        runner: ProcessRunner,
        *,
        options: RecordOptions,
        data_path: Path,
        perf: str | None = None,
    ) -> None:
        self.runner = runner
        self.options = options
        self.perf = perf or find_perf()
        self.data_path = data_path
        self.loops = 0
        self.region_ns = 0
        self.control = PerfControl()
        self.wrap = WorkerWrap(
            argv_prefix=(
                self.perf,
                "record",
                "-q",
                "-o",
                str(self.data_path),
                *options.perf_options(),
                *self.control.perf_options,
                "--",
            ),
            pass_fds=tuple(self.control.pass_fds),
            after_spawn=self.control.after_spawn,
            release=self.control.close,
        )
        self._worker: StatementWorker | None = None
        self._mapped: tuple[str, ...] = ()

    def start(
        self,
        benchmark: Benchmark,
        variant: Variant,
        *,
        interpreter: str,
        cpu: int | None,
        timeout_s: float,
    ) -> None:
        """Start the one worker of a recording outside a session (`record_statement_profile`)."""
        try:
            self._worker = StatementWorker(
                self.runner,
                benchmark,
                variant,
                interpreter=interpreter,
                cpu=cpu,
                timeout_s=timeout_s,
                launch_prefix=self.wrap.argv_prefix,
                pass_fds=self.wrap.pass_fds,
            )
        finally:
            self.wrap.after_spawn()

    def started(self, worker: StatementWorker) -> None:
        self._worker = worker

    @property
    def worker(self) -> StatementWorker:
        assert self._worker is not None, "this recording's worker was not started"
        return self._worker

    def calibrate(self, target_ns: int) -> int:
        return self.worker.calibrate(target_ns)

    def sample(self, loops: int, *, record: bool = True) -> WorkerSample:
        if not record:
            return self.worker.sample(loops)
        measured = self.worker.sample(
            loops, on_region_start=self.control.enable, on_region_end=self.control.disable
        )
        self.loops += loops
        self.region_ns += measured.wall_ns
        return measured

    def note_mapped_objects(self) -> None:
        """Read while the worker lives: it includes libraries the statement loaded (dlopen)."""
        self._mapped = mapped_objects(read_process_maps(self.worker.pid))

    def finish(self, *, timeout_s: float = 300.0) -> RecordedProfile:
        """Stop the worker (perf then writes its data) and read the samples back."""
        self.note_mapped_objects()
        self.worker.close()
        self.control.close()
        return self.recorded(timeout_s=timeout_s)

    def recorded(self, *, timeout_s: float = 300.0) -> RecordedProfile:
        """The samples perf wrote once the worker was closed."""
        data = read_profile(
            self.runner,
            self.data_path,
            perf=self.perf,
            demangle=self.options.demangle,
            timeout_s=timeout_s,
        )
        return RecordedProfile(
            requested_event=self.options.event,
            sampled_events=data.sampled_events,
            call_graph=self.options.call_graph,
            samples=data.samples,
            loops=self.loops,
            region_ns=self.region_ns,
            objects=tuple(dict.fromkeys((*self._mapped, *data.objects))),
        )

    def kill(self) -> None:
        self.worker.kill()
        self.control.close()


def record_statement_profile(
    runner: ProcessRunner,
    benchmark: Benchmark,
    variant: Variant,
    *,
    interpreter: str,
    cpu: int | None = None,
    region_s: float = 1.0,
    options: RecordOptions | None = None,
    sample_target_ms: float = 10.0,
    timeout_s: float = 60.0,
) -> RecordedProfile:
    """Profile one variant's statement for about `region_s` seconds of its timed loop."""
    perf = find_perf()
    chosen, _ = probe_recording(runner, options or RecordOptions(), perf=perf)
    with tempfile.TemporaryDirectory(prefix="perflab-profile-") as tmp:
        worker = ProfiledWorker(
            runner, options=chosen, data_path=Path(tmp) / f"{variant.name}.perf.data", perf=perf
        )
        worker.start(benchmark, variant, interpreter=interpreter, cpu=cpu, timeout_s=timeout_s)
        try:
            loops = worker.calibrate(int(sample_target_ms * 1e6))
            while worker.region_ns < region_s * 1e9:
                worker.sample(loops)
        except BaseException:
            worker.kill()
            raise
        return worker.finish()


def record_command_profile(
    runner: ProcessRunner,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    cpu: int | None = None,
    runs: int = 1,
    options: RecordOptions | None = None,
    timeout_s: float = 600.0,
) -> RecordedProfile:
    """Profile a whole command `runs` times under `perf record` (all samples pooled)."""
    perf = find_perf()
    chosen, _ = probe_recording(runner, options or RecordOptions(), perf=perf)
    samples: list[ProfileSample] = []
    events: tuple[str, ...] = ()
    objects: dict[str, None] = {}
    region_ns = 0
    with tempfile.TemporaryDirectory(prefix="perflab-profile-") as tmp:
        for run in range(runs):
            wall_ns, data = _record_command_once(
                runner, perf, chosen, argv, env, cwd, cpu, Path(tmp) / f"{run}.data", timeout_s
            )
            samples += data.samples
            events = events or data.sampled_events
            objects.update(dict.fromkeys(data.objects))
            region_ns += wall_ns
    return RecordedProfile(
        chosen.event,
        events,
        chosen.call_graph,
        tuple(samples),
        runs,
        region_ns,
        objects=tuple(objects),
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


def _record_command_once(
    runner: ProcessRunner,
    perf: str,
    options: RecordOptions,
    argv: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | None,
    cpu: int | None,
    data_path: Path,
    timeout_s: float,
) -> tuple[int, PerfData]:
    spec = LaunchSpec(
        argv=(perf, "record", "-q", "-o", str(data_path), *options.perf_options(), "--", *argv),
        env=env,
        cwd=cwd,
        cpu=cpu,
    )
    result = runner.run(spec, timeout_s=timeout_s)
    if not result.ok:
        raise BenchmarkFailedError(
            f"the command under perf record {result.describe_failure()}",
            detail=result.stderr[-2000:],
            hint="run the command alone first; perf itself fails with status 129 on a bad option",
        )
    return result.wall_ns, read_profile(runner, data_path, perf=perf, demangle=options.demangle)


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
            wall_ns, data = _record_command_once(
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
