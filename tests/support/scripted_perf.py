"""`perf` played in memory for `FakeRunner`: the recording probe, `perf record` around a worker
(its control channel answered and logged) or a command, and `perf script` / `perf evlist`
reading back canned text from tests/golden/data/perf; and `perf stat`: its probe on `true`,
around a worker (the channel answered, its `-x,` CSV written when the worker quits) or a
command. What the profile, asm and counters lenses' loops decide is then tested without perf or
a process."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from tests.support.scripted_worker import ScriptedWorker

PERF = "/usr/bin/perf"
PERF_DATA = Path(__file__).resolve().parents[1] / "golden" / "data" / "perf"
# a DWARF call-graph recording of `sorted(...)` in CPython 3.11, cpu-clock (a VM)
SCRIPT_TEXT = (PERF_DATA / "script_python_dwarf.txt").read_text()
_CONTROL = re.compile(r"--control fd:(\d+),(\d+)")


class ControlLog:
    """What perf was told through its control channel, in order ("enable", "disable"), each
    acknowledged as perf does: one thread per recorded worker reads the commands."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self._threads: list[threading.Thread] = []

    def answer(self, spec: LaunchSpec) -> None:
        """Take perf's ends of the channel named in `spec` (the parent closes its own after
        the spawn) and acknowledge every command until the parent closes the channel."""
        found = _CONTROL.search(" ".join(spec.argv))
        assert found is not None, spec.argv
        commands = os.fdopen(os.dup(int(found.group(1))), "rb", buffering=0)
        acks = os.dup(int(found.group(2)))

        def serve() -> None:
            with commands:
                for line in iter(commands.readline, b""):
                    self.commands.append(line.decode().strip())
                    os.write(acks, b"ack\n")
            os.close(acks)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        self._threads.append(thread)

    def join(self) -> None:
        """Until perflab closed every channel (each answering thread then ends)."""
        for thread in self._threads:
            thread.join(timeout=5)
            assert not thread.is_alive(), "perflab left a control channel open"


@dataclass
class ScriptedPerf:
    """The `perf` a `FakeRunner` answers as; `runner()` scripts one. Each recorded worker is a
    `ScriptedWorker`; give it `reported_pid=os.getpid()` when the code reads the worker's
    /proc/PID/maps."""

    worker: ScriptedWorker
    script_text: str = SCRIPT_TEXT
    events: str = "cpu-clock\n"
    refused_call_graphs: frozenset[str] = frozenset()  # the probe fails with these
    command_status: int = 0  # of a command recorded under `perf record`
    script_status: int = 0  # of `perf script` (1: it cannot read the data)
    command_wall_ns: int = 20_000_000
    control: ControlLog = field(default_factory=ControlLog)
    recorded: list[LaunchSpec] = field(default_factory=list)  # perf record runs and spawns
    read: list[LaunchSpec] = field(default_factory=list)  # perf script runs
    # perf stat: an event's count per counted loop in a process started with `spec` (a
    # command's run counts as one loop); None: the event is <not supported> here
    stat_per_loop: Callable[[LaunchSpec, str], float | None] = lambda spec, event: 1000.0
    counted: list[LaunchSpec] = field(default_factory=list)  # perf stat spawns and runs

    def runner(self, runner: FakeRunner | None = None) -> FakeRunner:
        runner = runner or FakeRunner()
        runner.on_run(r"^\S*perf stat .* -- true$", self._stat_probe)
        runner.on_run(r"^\S*perf stat ", self._stat_command)
        runner.on_spawn(r"^\S*perf stat ", self._stat_worker)
        runner.on_run(r"^\S*perf evlist", stdout=self.events)
        runner.on_run(r"^\S*perf script", self._script)
        runner.on_run(r"^\S*perf record .* -- true$", self._probe)
        runner.on_run(r"^\S*perf record ", self._command)
        runner.on_spawn(r"^\S*perf record ", self._worker)
        return runner

    def _probe(self, spec: LaunchSpec, _stdin: str | None) -> Completed:
        graph = _option(spec.argv, "--call-graph") or "none"
        if graph.split(",")[0] in self.refused_call_graphs:
            return Completed(spec.argv, 129, "", f"unsupported call graph {graph}\n", 1)
        return Completed(spec.argv, 0, "", "", 1)

    def _command(self, spec: LaunchSpec, _stdin: str | None) -> Completed:
        self.recorded.append(spec)
        error = "" if self.command_status == 0 else "the command failed\n"
        return Completed(spec.argv, self.command_status, "", error, self.command_wall_ns)

    def _script(self, spec: LaunchSpec, _stdin: str | None) -> Completed:
        self.read.append(spec)
        if self.script_status:
            return Completed(spec.argv, self.script_status, "", "truncated data\n", 1)
        return Completed(spec.argv, 0, self.script_text, "", 1)

    def _worker(self, spec: LaunchSpec) -> FakeProcess:
        self.recorded.append(spec)
        self.control.answer(spec)
        return self.worker(spec)

    def _stat_csv(self, spec: LaunchSpec, loops: int) -> str:
        """perf stat's `-x,` lines for `loops` counted loops: count, unit, event, time running,
        percentage running."""
        lines = []
        for event in str(_option(spec.argv, "-e")).split(","):
            per_loop = self.stat_per_loop(spec, event)
            if per_loop is None:
                lines.append(f"<not supported>,,{event},0,100.00,,")
            else:
                lines.append(f"{round(per_loop * loops)},,{event},1000000,100.00,,")
        return "\n".join(lines) + "\n"

    def _stat_probe(self, spec: LaunchSpec, _stdin: str | None) -> Completed:
        return Completed(spec.argv, 0, "", self._stat_csv(spec, 1), 1)

    def _stat_command(self, spec: LaunchSpec, _stdin: str | None) -> Completed:
        self.counted.append(spec)
        Path(str(_option(spec.argv, "-o"))).write_text(self._stat_csv(spec, 1))
        return Completed(spec.argv, self.command_status, "", "", self.command_wall_ns)

    def _stat_worker(self, spec: LaunchSpec) -> FakeProcess:
        """The worker under perf stat: the loops of the samples counted between enable and
        disable (those the worker is sent with a handshake) counted, written at its quit."""
        self.counted.append(spec)
        self.control.answer(spec)
        process = self.worker(spec)
        quits = process.exit_on

        def exit_on(line: str) -> int | None:
            status = quits(line)
            if status is not None:
                loops = _counted_loops(process.written)
                Path(str(_option(spec.argv, "-o"))).write_text(self._stat_csv(spec, loops))
            return status

        process.exit_on = exit_on
        return process


def _counted_loops(written: Sequence[str]) -> int:
    requests = [json.loads(line) for line in written]
    return sum(
        int(r["loops"])
        for r in requests
        if r.get("op") == "sample" and r.get("handshake") and not r.get("empty")
    )


def _option(argv: Sequence[str], name: str) -> str | None:
    for at, word in enumerate(argv):
        if word == name and at + 1 < len(argv):
            return argv[at + 1]
        if word.startswith(name + "="):
            return word.partition("=")[2]
    return None
