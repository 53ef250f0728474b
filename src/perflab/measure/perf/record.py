"""A variant's measured region recorded under `perf record`: the recording the profile lens and
the asm lens make (measure/perf/recordings.py: once, when a run has both). perf's command lines,
its probe and its reading back are tool_drivers/perf.py's.

Statements: the worker runs under `perf record --control ... --delay -1` (events start disabled);
the caller enables sampling just before each timed loop and disables it right after, through the
worker's handshake (`ProfiledWorker`). Commands: `perf record` around the whole process
(`CommandUnderPerf`), run after run. The asm lens records with symbol-table (mangled) names
(`RecordOptions(demangle=False)`) and reads the files the process mapped
(`RecordedProfile.objects`, from perf's mmap events and, for statements, the worker's
/proc/PID/maps).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.perf.recordings import RecordedProfile
from perflab.measure.session import WorkerWrap
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerSample
from perflab.records.model import Benchmark, Variant
from perflab.tool_drivers.perf import (
    CommandUnderPerf,
    PerfControl,
    RecordOptions,
    find_perf,
    probe_recording,
    read_profile,
    record_argv,
)
from perflab.tool_drivers.process_maps import mapped_objects, read_process_maps
from perflab.tool_output.perf_script import ProfileSample


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
        self.perf = perf or find_perf(runner)
        self.data_path = data_path
        self.loops = 0
        self.region_ns = 0
        self.control = PerfControl()
        self.wrap = WorkerWrap(
            argv_prefix=record_argv(self.perf, self.data_path, options, control=self.control),
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
        except BaseException:
            self.control.close()  # no worker to record: perflab's ends of the channel too
            raise
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
    perf = find_perf(runner)
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
    perf = find_perf(runner)
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
