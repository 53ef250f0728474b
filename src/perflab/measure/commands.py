"""Running whole commands: argv construction and the pinned launcher process."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perflab.machine.proc import LaunchSpec, LiveProcess, ProcessRunner, count_stopped
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.worker import COMMAND_LAUNCHER_PATH

_SHELL_SYNTAX = set("|&;<>()$`\\\"'*?[]#~=%{}\n")


def command_argv(command: str, *, shell: str = "auto") -> tuple[str, ...]:
    """Run simple commands directly (no shell start-up inside the measurement); anything using
    shell syntax goes through `sh -c`. `shell="none"` (hyperfine's -N): never a shell, the
    words split as a shell splits them (quotes group, nothing is expanded)."""
    if shell != "none" and any(char in _SHELL_SYNTAX for char in command):
        return ("/bin/sh", "-c", command)
    try:
        words = tuple(shlex.split(command))
    except ValueError as error:
        raise ConfigError(f"cannot split command {command!r}: {error}") from error
    if not words:
        raise ConfigError("the command is empty", hint="--cmd takes a command line")
    return words


@dataclass(frozen=True, kw_only=True)
class CommandRun:
    """One timed run of a whole command by the launcher: wall and CPU time, peak RSS, its CPU, how
    it ended, and its waits for other processes."""

    wall_ns: int
    returncode: int | None
    timed_out: bool
    user_ns: int
    sys_ns: int
    maxrss_kb: int
    cpu: int | None
    stderr_tail: str
    # the command's own process (not its children): run-queue wait while other processes ran
    # (waited_for_others_ns); and involuntary context switches of it and the children it waited
    # for (wait4's rusage)
    run_queue_ns: int | None = None
    involuntary_switches: int | None = None
    queued_ns: int | None = None  # its whole run-queue wait, perflab's launcher's turns included
    launcher_cpu_ns: int | None = None  # the launcher's CPU time from the spawn to the exit


def waited_for_others_ns(
    queued_ns: int | None,
    *,
    launcher_cpu_ns: int | None,
    program_cpu_ns: int,
    leader_cpu_ns: int | None,
) -> int | None:
    """The part of the command's run-queue wait that other processes took. On its one CPU
    the command's first thread waits only while another task runs there: perflab's launcher,
    the program's own other threads and children (wait4's CPU time less the first thread's),
    or another process. The first two are not another process's turn, so their CPU time
    comes off the wait; what is left is the least that other processes took."""
    if queued_ns is None:
        return None
    own_ns = launcher_cpu_ns or 0
    if leader_cpu_ns is not None:
        own_ns += max(0, program_cpu_ns - leader_cpu_ns)
    return max(0, queued_ns - own_ns)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def command_run(reply: Mapping[str, Any]) -> CommandRun:
    """The launcher's reply to a run, as a `CommandRun`: the run-queue wait is what other
    processes took of it (`waited_for_others_ns`)."""
    queued_ns = _optional_int(reply.get("run_queue_ns"))
    launcher_cpu_ns = _optional_int(reply.get("launcher_cpu_ns"))
    program_cpu_ns = int(reply["user_ns"]) + int(reply["sys_ns"])
    return CommandRun(
        wall_ns=int(reply["wall_ns"]),
        returncode=reply["returncode"],
        timed_out=bool(reply["timed_out"]),
        user_ns=int(reply["user_ns"]),
        sys_ns=int(reply["sys_ns"]),
        maxrss_kb=int(reply["maxrss_kb"]),
        cpu=reply.get("cpu"),
        stderr_tail=str(reply.get("stderr_tail", "")),
        run_queue_ns=waited_for_others_ns(
            queued_ns,
            launcher_cpu_ns=launcher_cpu_ns,
            program_cpu_ns=program_cpu_ns,
            leader_cpu_ns=_optional_int(reply.get("leader_cpu_ns")),
        ),
        involuntary_switches=_optional_int(reply.get("nivcsw")),
        queued_ns=queued_ns,
        launcher_cpu_ns=launcher_cpu_ns,
    )


class CommandLauncher:
    """A small pinned process that starts commands and times them next to them.
    `show_output`: the commands write to perflab's own standard output and error (hyperfine's
    --show-output); else their output is discarded and the tail of their stderr kept."""

    def __init__(
        self, runner: ProcessRunner, *, cpu: int | None, show_output: bool = False
    ) -> None:
        # copies of perflab's stdout and stderr, passed to the launcher (whose own stdout and
        # stderr are its pipes to perflab) for the commands it starts
        self.output_fds = (os.dup(1), os.dup(2)) if show_output else ()
        try:
            self.process: LiveProcess = runner.spawn(
                LaunchSpec(argv=(sys.executable, "-u", str(COMMAND_LAUNCHER_PATH)), cpu=cpu),
                pass_fds=self.output_fds,
            )
        finally:
            for fd in self.output_fds:  # the launcher has its own copies now
                os.close(fd)

    def run(
        self,
        argv: tuple[str, ...],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        timeout_s: float,
        variant: str | None = None,
        benchmark: str | None = None,
    ) -> CommandRun:
        request: dict[str, Any] = {
            "op": "run",
            "argv": list(argv),
            "env": dict(env),
            "cwd": cwd,
            "timeout_s": timeout_s,
        }
        if self.output_fds:
            request["output_fds"] = list(self.output_fds)
        try:
            self.process.write_line(json.dumps(request))
        except BrokenPipeError:
            self.close()
            raise BenchmarkFailedError("the command launcher stopped answering") from None
        reply = self._receive(timeout_s + 30.0)
        if not reply.get("ok"):
            raise BenchmarkFailedError(
                f"cannot start command {shlex.join(argv)!r}: {reply.get('error')}",
                hint="check the command and the variant's cwd=",
                variant=variant,
                benchmark=benchmark,
            )
        count_stopped(int(reply.get("left", 0)))
        return command_run(reply)

    def _receive(self, timeout_s: float) -> dict[str, Any]:
        line = self.process.read_line(timeout_s)
        if not line:
            self.close()
            raise BenchmarkFailedError("the command launcher stopped answering")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.write_line('{"op": "quit"}')
                if self.process.wait(timeout_s=5) is None:
                    self.process.kill()
            except BrokenPipeError:
                self.process.kill()
        self.process.stop_leftovers()
        self.process.close()

    def kill(self) -> None:
        """Stop the launcher and the command it runs, at once (interrupted, failed)."""
        self.process.kill()

    def __enter__(self) -> CommandLauncher:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None:
            self.kill()  # do not wait for the command to finish
        self.close()
