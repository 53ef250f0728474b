"""`perf record` around one variant's measured region, and `perf script` reading it back: the
recording the profile lens and the asm lens make (measure/perf/recordings.py: once, when a run has
both).

Statements: the worker runs under `perf record --control ... --delay -1` (events start disabled);
the caller enables sampling just before each timed loop and disables it right after, through the
worker's handshake (`ProfiledWorker`). Commands: `perf record` around the whole process.

perf falls back from `cycles` to `cpu-clock` without a PMU (VMs) and says nothing; the event that
was really sampled is read back with `perf evlist` and reported. The asm lens records with
symbol-table (mangled) names (`RecordOptions(demangle=False)`) and reads the files the process
mapped (`RecordedProfile.objects`, from perf's mmap events and, for statements, the worker's
/proc/PID/maps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from perflab.machine.parallel import runs_real_processes
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.perf.recordings import CallGraph, RecordedProfile, RecordOptions
from perflab.measure.session import WorkerWrap
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerSample
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.records.model import Benchmark, Variant
from perflab.tool_drivers.perf_control import PerfControl, find_perf
from perflab.tool_drivers.process_maps import mapped_objects, read_process_maps
from perflab.tool_output.perf_script import (
    ProfileSample,
    executable_mappings,
    parse_evlist,
    parse_perf_script,
)

_SCRIPT_FIELDS = "comm,pid,tid,time,event,period,ip,sym,symoff,dso"


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
    stacks: bool = True,
    timeout_s: float = 300.0,
) -> PerfData:
    """Samples and mappings (via `perf script`) and the events really sampled (`perf evlist`).
    Without `stacks`, each sample is its sampled instruction only (`--hide-call-graph`), however
    it was recorded: a reader of leaves need not unwind call graphs."""
    evlist = runner.run(LaunchSpec(argv=(perf, "evlist", "-i", str(data_path))), timeout_s=60)
    naming: tuple[str, ...] = () if demangle else ("--no-demangle",)
    naming += () if stacks else ("--hide-call-graph",)
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
# starts perf twice: real probes are made once per process, per perf and options, and their
# answer reused (the asm and profile lenses would otherwise each probe). Only
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
    with private_folder("probe") as tmp:
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

    def start(self, benchmark: Benchmark, variant: Variant, launch: WorkerLaunch) -> None:
        """Start the one worker of a recording outside a session (`record_statement_profile`),
        under `perf record`."""
        launch = replace(launch, prefix=self.wrap.argv_prefix, pass_fds=self.wrap.pass_fds)
        try:
            self._worker = StatementWorker.start(self.runner, benchmark, variant, launch)
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

    def recorded(
        self, *, timeout_s: float = 300.0, demangle: bool | None = None, stacks: bool = True
    ) -> RecordedProfile:
        """The samples perf wrote once the worker was closed (`demangle`: the options' when
        None; `stacks`: see `read_profile`)."""
        data = read_profile(
            self.runner,
            self.data_path,
            perf=self.perf,
            demangle=self.options.demangle if demangle is None else demangle,
            stacks=stacks,
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


@dataclass(frozen=True)
class RecordedRegion:
    """How much of a statement's timed loop a recording takes: about `seconds` in all, in
    samples of about `sample_ms` each."""

    seconds: float = 1.0
    sample_ms: float = 10.0


def record_statement_profile(
    runner: ProcessRunner,
    benchmark: Benchmark,
    variant: Variant,
    launch: WorkerLaunch,
    *,
    region: RecordedRegion = RecordedRegion(),
    options: RecordOptions | None = None,
) -> RecordedProfile:
    """Profile one variant's statement for about `region.seconds` of its timed loop, its worker
    started as `launch` says (under `perf record`: a prefix there is replaced)."""
    perf = find_perf()
    chosen, _ = probe_recording(runner, options or RecordOptions(), perf=perf)
    with private_folder("profile") as tmp:
        worker = ProfiledWorker(
            runner, options=chosen, data_path=Path(tmp) / f"{variant.name}.perf.data", perf=perf
        )
        worker.start(benchmark, variant, launch)
        try:
            loops = worker.calibrate(int(region.sample_ms * 1e6))
            while worker.region_ns < region.seconds * 1e9:
                worker.sample(loops)
        except BaseException:
            worker.kill()
            raise
        return worker.finish()


def record_command_profile(
    runner: ProcessRunner,
    command: LaunchSpec,
    *,
    runs: int = 1,
    options: RecordOptions | None = None,
    timeout_s: float = 600.0,
) -> RecordedProfile:
    """Profile a whole `command` `runs` times under `perf record` (all samples pooled)."""
    perf = find_perf()
    chosen, _ = probe_recording(runner, options or RecordOptions(), perf=perf)
    samples: list[ProfileSample] = []
    events: tuple[str, ...] = ()
    objects: dict[str, None] = {}
    region_ns = 0
    under_perf = CommandUnderPerf(perf, chosen, command, timeout_s)
    with private_folder("profile") as tmp:
        for run in range(runs):
            wall_ns, data = under_perf.run_and_read(runner, Path(tmp) / f"{run}.data")
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


@dataclass(frozen=True)
class CommandUnderPerf:
    """One command as `perf record` runs it: where, on which CPU, with which options."""

    perf: str
    options: RecordOptions
    command: LaunchSpec
    timeout_s: float

    def run(self, runner: ProcessRunner, data_path: Path) -> int:
        """One run under `perf record`, writing `data_path`: its wall time."""
        spec = replace(
            self.command,
            argv=(self.perf, "record", "-q", "-o", str(data_path), *self.options.perf_options(),
                  "--", *self.command.argv),
        )  # fmt: skip
        result = runner.run(spec, timeout_s=self.timeout_s)
        if not result.ok:
            raise BenchmarkFailedError(
                f"the command under perf record {result.describe_failure()}",
                detail=result.stderr[-2000:],
                hint="run the command alone first; perf itself fails with status 129 on a bad "
                "option",
            )
        return result.wall_ns

    def run_and_read(self, runner: ProcessRunner, data_path: Path) -> tuple[int, PerfData]:
        """One run, and what its perf.data says."""
        wall_ns = self.run(runner, data_path)
        return wall_ns, read_profile(
            runner, data_path, perf=self.perf, demangle=self.options.demangle
        )
