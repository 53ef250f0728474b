"""The one seam through which perflab starts processes.

Collectors never call :mod:`subprocess` directly: they take a :class:`ProcessRunner`, so tests can
swap in a fake and integration tests use the real tools.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Protocol


@dataclass(frozen=True)
class Completed:
    """A finished process. `timed_out` processes were killed; their returncode is then None."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    wall_ns: int
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe_failure(self) -> str:
        """One line saying how the process ended, for error messages."""
        if self.timed_out:
            return "timed out and was killed"
        assert self.returncode is not None
        if self.returncode < 0:
            return f"was killed by signal {-self.returncode}"
        return f"exited with status {self.returncode}"


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one process."""

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None  # the complete environment; None inherits perflab's
    cwd: str | None = None
    cpu: int | None = None  # pin the process (and its children) to this CPU
    disable_aslr: bool = False  # fixed address-space layout (as `setarch -R`), inherited


class ProcessRunner(Protocol):
    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed: ...

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> subprocess.Popen[str]:
        """Start a long-lived process with text pipes on stdin/stdout/stderr."""
        ...


_ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag, as used by `setarch -R`


def _child_setup(spec: LaunchSpec):  # type: ignore[no-untyped-def]
    """What runs in the child between fork and exec: pinning and layout, inherited by the
    program and everything it starts."""
    if spec.cpu is None and not spec.disable_aslr:
        return None
    personality = ctypes.CDLL(None, use_errno=True).personality if spec.disable_aslr else None

    def setup() -> None:
        if spec.cpu is not None:
            os.sched_setaffinity(0, {spec.cpu})
        if personality is not None:
            personality(_ADDR_NO_RANDOMIZE)

    return setup


class SubprocessRunner:
    """The real runner."""

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        start_ns = time.perf_counter_ns()
        try:
            proc = subprocess.Popen(
                spec.argv,
                env=dict(spec.env) if spec.env is not None else None,
                cwd=spec.cwd,
                stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                preexec_fn=_child_setup(spec),
                start_new_session=True,
            )
        except FileNotFoundError as error:
            return Completed(spec.argv, 127, "", str(error), time.perf_counter_ns() - start_ns)
        except PermissionError as error:
            return Completed(spec.argv, 126, "", str(error), time.perf_counter_ns() - start_ns)
        try:
            stdout, stderr = proc.communicate(stdin_text, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            return Completed(
                spec.argv, None, stdout, stderr, time.perf_counter_ns() - start_ns, timed_out=True
            )
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        return Completed(
            spec.argv, proc.returncode, stdout, stderr, time.perf_counter_ns() - start_ns
        )

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> subprocess.Popen[str]:
        return subprocess.Popen(
            spec.argv,
            env=dict(spec.env) if spec.env is not None else None,
            cwd=spec.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            bufsize=1,
            preexec_fn=_child_setup(spec),
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the process and everything it started (a shell's children included)."""
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def which(tool: str) -> str | None:
    return shutil.which(tool)


def read_all(stream: IO[str] | None) -> str:
    return stream.read() if stream is not None else ""
