"""perf, started and read back behind narrow calls. They cover finding it, the `perf stat` and `perf
record` command lines, perf's control channel, the probes of which events `perf stat` counts and
what `perf record` accepts here, a command recorded whole, and `perf script`/`perf evlist` reading
a recording back. What perf writes is parsed in perflab.tool_output (perf_stat, perf_script); the
lenses' sampling around a worker's measured region (measure/perf/, lenses/counters) uses these
calls.

The control channel: `perf stat` and `perf record` started with `--control fd:CTL,ACK -D -1`
open their events disabled and switch them on and off when told to on CTL, answering `ack` on
ACK. The parent sends `enable` just before the worker's timed loop and `disable` right after it
(through the worker's handshake), so only the measured region is counted or sampled. Pipes, not
named FIFOs: nothing is left in the file system and the descriptors are simply inherited by perf.

perf falls back from `cycles` to `cpu-clock` without a PMU (VMs) and says nothing; the event that
was really sampled is read back with `perf evlist` and reported.
"""

from __future__ import annotations

import enum
import os
import select
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from perflab.machine.parallel import runs_real_processes
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.tool_output.perf_script import (
    ProfileSample,
    executable_mappings,
    parse_evlist,
    parse_perf_script,
)
from perflab.tool_output.perf_stat import (
    EventCount,
    counts_for_requested,
    find_unknown_event,
    is_permission_failure,
    parse_stat_csv,
    permission_denied_event,
)

# perf acknowledges a control command at once; no reply this long means perf has no --control or is
# stuck, not slow
ACK_TIMEOUT_S = 10.0


def find_perf(runner: ProcessRunner) -> str:
    path = runner.which("perf")
    if path is None:
        raise ToolUnavailableError(
            "perf is not installed",
            hint="apt-get install linux-perf (Debian) or linux-tools-$(uname -r) (Ubuntu)",
        )
    return path


class PerfControlError(ToolUnavailableError):
    """perf did not acknowledge a control command: it died or does not support --control."""


class PerfControl:
    """One control channel for one perf process."""

    def __init__(self) -> None:
        self._ctl_read, self._ctl_write = os.pipe()
        self._ack_read, self._ack_write = os.pipe()
        self._open = {self._ctl_read, self._ctl_write, self._ack_read, self._ack_write}
        self.enabled = False

    @property
    def perf_options(self) -> tuple[str, ...]:
        """Options for perf: start disabled, obey this channel."""
        return ("--control", f"fd:{self._ctl_read},{self._ack_write}", "--delay", "-1")

    @property
    def pass_fds(self) -> Sequence[int]:
        return (self._ctl_read, self._ack_write)

    def after_spawn(self) -> None:
        """Close perf's ends in the parent: if perf dies, reads of the ack pipe see EOF."""
        self._close(self._ctl_read, self._ack_write)

    def enable(self) -> None:
        self._command("enable")
        self.enabled = True

    def disable(self) -> None:
        self._command("disable")
        self.enabled = False

    def _command(self, command: str) -> None:
        try:
            os.write(self._ctl_write, command.encode() + b"\n")
        except BrokenPipeError:
            raise PerfControlError(f"perf stopped before it could {command} its events") from None
        ready, _, _ = select.select([self._ack_read], [], [], ACK_TIMEOUT_S)
        reply = os.read(self._ack_read, 64) if ready else b""
        if not reply.startswith(b"ack"):
            raise PerfControlError(
                f"perf did not acknowledge {command!r} within {ACK_TIMEOUT_S:g} s",
                hint="perf 5.10 or later is needed for --control; check `perf --version`",
            )

    def close(self) -> None:
        self._close(*tuple(self._open))

    def _close(self, *fds: int) -> None:
        # never close a number twice: by then it may belong to another file
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)


class CallGraph(enum.StrEnum):
    """How perf record unwinds call stacks (perf's --call-graph modes)."""

    NONE = "none"
    FP = "fp"
    DWARF = "dwarf"
    LBR = "lbr"


@dataclass(frozen=True)
class RecordOptions:
    """How perf record samples: the event, the rate or period, the unwinding, and how perf script
    names symbols."""

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
    # Skip reading every loaded BPF program at start-up: a benchmark's user-space region has no
    # samples in BPF code, and the reading is a large part of a short command's recording.
    # perf before 5.1 does not know the option; the probe then records without it.
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


def stat_argv(
    perf: str,
    events: Sequence[str],
    *,
    output: Path | None = None,
    control: PerfControl | None = None,
) -> tuple[str, ...]:
    """`perf stat` counting `events` as CSV, up to `--` (the command follows): to `output`,
    else on stderr; obeying `control` (events start disabled) when given."""
    written = ("-o", str(output)) if output is not None else ()
    controlled = control.perf_options if control is not None else ()
    return (perf, "stat", "-x,", *written, *controlled, "-e", ",".join(events), "--")


class Refusal(enum.StrEnum):
    """Why `perf stat` would not count an event here."""

    PERMISSION = "permission"  # perf_event_paranoid or a missing capability
    UNKNOWN_EVENT = "unknown event"  # perf does not know the name (exit 129)
    FAILED = "failed"  # perf failed without naming an event; the first one left was set aside


@dataclass(frozen=True)
class RefusedEvent:
    """An event `perf stat` refused, with perf's words: the parser's message for an unknown
    name, how perf failed otherwise; `detail` is the end of its stderr."""

    event: str
    refusal: Refusal
    message: str
    detail: str


@dataclass(frozen=True)
class StatProbe:
    """What `perf stat` said of some events on `true`: the events it finally ran with, their
    counts by the names asked for, and the events it refused, in the order refused."""

    accepted: tuple[str, ...]
    counts: Mapping[str, EventCount]
    refused: tuple[RefusedEvent, ...]


def probe_stat(
    runner: ProcessRunner, events: Sequence[str], *, perf: str, timeout_s: float = 60
) -> StatProbe:
    """Count `events` (duplicates asked once) with `perf stat` on `true`. perf stops at the first
    event it refuses, so that one is identified, set aside and the rest tried again: one bad
    name never hides the others."""
    remaining = list(dict.fromkeys(events))
    refused: list[RefusedEvent] = []
    # every refused round sets one event aside: at most one round per event, and a last one
    for _ in range(len(remaining) + 1):
        if not remaining:
            break
        result = runner.run(
            LaunchSpec(argv=(*stat_argv(perf, remaining), "true")), timeout_s=timeout_s
        )
        if result.ok:
            counts = counts_for_requested(parse_stat_csv(result.stderr), remaining)
            return StatProbe(tuple(remaining), counts, tuple(refused))
        if result.timed_out:  # perf itself hangs: another round would hang as long
            failure = result.describe_failure()
            tail = result.stderr[-2000:]
            refused += [RefusedEvent(e, Refusal.FAILED, failure, tail) for e in remaining]
            break
        culprit = _refused_event(result.stderr, remaining, result.describe_failure())
        refused.append(culprit)
        remaining = [event for event in remaining if event != culprit.event]
    return StatProbe((), {}, tuple(refused))


def _refused_event(stderr: str, events: Sequence[str], failure: str) -> RefusedEvent:
    """The event perf's stderr blames; without one, the first event, as a failure."""
    detail = stderr[-2000:]
    if is_permission_failure(stderr):
        named = permission_denied_event(stderr)
        # without a name, perf refuses everything: each round then sets one event aside
        name = named if named is not None and named in events else events[0]
        return RefusedEvent(name, Refusal.PERMISSION, "perf: no permission", detail)
    unknown = find_unknown_event(stderr, events)
    if unknown is not None and unknown.event in events:
        return RefusedEvent(unknown.event, Refusal.UNKNOWN_EVENT, unknown.message, detail)
    return RefusedEvent(events[0], Refusal.FAILED, failure, detail)


def record_argv(
    perf: str, data_path: Path, options: RecordOptions, *, control: PerfControl | None = None
) -> tuple[str, ...]:
    """`perf record` writing `data_path` as `options` say, up to `--` (the command follows);
    obeying `control` (sampling starts disabled) when given."""
    controlled = control.perf_options if control is not None else ()
    return (perf, "record", "-q", "-o", str(data_path), *options.perf_options(), *controlled, "--")


_SCRIPT_FIELDS = "comm,pid,tid,time,event,period,ip,sym,symoff,dso"


@dataclass(frozen=True)
class PerfData:
    """What one perf.data file says: its samples, the events really sampled and the files mapped
    executable while perf recorded (its mmap events)."""

    samples: tuple[ProfileSample, ...]
    sampled_events: tuple[str, ...]
    objects: tuple[str, ...]


def sampled_events(
    runner: ProcessRunner, perf: str, data_path: Path, *, timeout_s: float = 60
) -> tuple[str, ...]:
    """The events a recording really sampled (`perf evlist`); none when perf cannot say."""
    evlist = runner.run(
        LaunchSpec(argv=(perf, "evlist", "-i", str(data_path))), timeout_s=timeout_s
    )
    return tuple(parse_evlist(evlist.stdout) if evlist.ok else ())


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
        sampled_events=sampled_events(runner, perf, data_path),
        objects=executable_mappings(script.stdout),
    )


# What `perf record` accepts, by perf and the options asked for: the options that work and the
# events perf sampled.
RecordingAnswers = dict[tuple[str, RecordOptions], tuple[RecordOptions, tuple[str, ...]]]
# What `perf record` accepts on this machine does not change while perflab runs, and each probe
# starts perf twice: real probes are made once per process, per perf and options, and their
# answer reused (the asm and profile lenses would otherwise each probe). Only an answer is kept,
# never a refusal.
THIS_MACHINES_ANSWERS: RecordingAnswers = {}


def probe_recording(
    runner: ProcessRunner,
    options: RecordOptions,
    *,
    perf: str | None = None,
    answers: RecordingAnswers | None = None,
) -> tuple[RecordOptions, list[str]]:
    """Record `true` with these options; fall back DWARF -> frame pointers -> none if perf
    refuses. Returns the options that work and the event perf really sampled. `answers`: the
    answers remembered and reused (None: THIS_MACHINES_ANSWERS for a runner of real processes;
    a fake runner's machine is its own, never remembered)."""
    perf = perf or find_perf(runner)
    if answers is None and runs_real_processes(runner):
        answers = THIS_MACHINES_ANSWERS
    known = None if answers is None else answers.get((perf, options))
    if known is None:
        known = _probe_recording(runner, options, perf)
        if answers is not None:
            answers[(perf, options)] = known
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
            argv = (*record_argv(perf, data, candidate), "true")
            result = runner.run(LaunchSpec(argv=argv), timeout_s=60)
            if result.ok:
                return candidate, sampled_events(runner, perf, data)
            last_error = result.stderr
    raise ToolUnavailableError(
        f"perf record cannot sample {options.event!r} here",
        detail=last_error[-2000:],
        hint="check `perf record -e cpu-clock -- true`; as non-root, lower "
        "kernel.perf_event_paranoid (sudo sysctl kernel.perf_event_paranoid=1) or grant "
        "CAP_PERFMON",
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
            argv=(*record_argv(self.perf, data_path, self.options), *self.command.argv),
        )
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
