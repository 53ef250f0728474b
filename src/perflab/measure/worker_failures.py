"""A statement worker's failures in words: its stderr drained all the time (its tail kept for
the messages), its failed replies and its exits turned into errors naming its benchmark and
variant."""

from __future__ import annotations

import signal
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from perflab.machine.proc import LiveProcess
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Variant

# a failed worker's stderr kept in its error: the traceback's end says what failed
STDERR_TAIL_CHARS = 4000
# stderr lines a worker keeps while it runs, so a chatty benchmark cannot fill memory
STDERR_TAIL_LINES = 200

_NATIVE_CRASH = (
    "the statement (or the native code it calls) crashed the interpreter; the Python stack "
    "where it crashed is above (faulthandler); gdb shows the native one"
)
CRASH_HINTS: dict[int, str] = {
    signal.SIGSEGV.value: _NATIVE_CRASH,
    signal.SIGBUS.value: _NATIVE_CRASH,
    signal.SIGILL.value: _NATIVE_CRASH + " (SIGILL: an instruction this CPU lacks, e.g. AVX-512?)",
    signal.SIGFPE.value: _NATIVE_CRASH,
    signal.SIGABRT.value: "the process aborted (a failed C assertion or abort() in native code); "
    "its last output is above",
    signal.SIGKILL.value: "killed from outside: out of memory (see `dmesg`) or by another process",
}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


class WorkerFailures:
    """The errors of one worker process (`StatementWorker`'s), with what it wrote to stderr.

    Draining starts at once: a statement that prints would otherwise fill the pipe and block."""

    def __init__(self, process: LiveProcess, benchmark: Benchmark, variant: Variant) -> None:
        self.process = process
        self.benchmark = benchmark
        self.variant = variant
        self._tail_lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        for line in self.process.stderr_lines():
            self._tail_lines.append(line)

    def stderr_tail(self) -> str:
        """The last of what the worker wrote to stderr (all of it, once it has exited)."""
        if self.process.poll() is not None:
            self._reader.join(timeout=2)
        return "".join(self._tail_lines)[-STDERR_TAIL_CHARS:]

    def stop_draining(self) -> None:
        """Wait (briefly) for the rest of stderr: after the process has ended."""
        self._reader.join(timeout=2)

    def error(
        self, message: str, *, hint: str | None = None, detail: str | None = None
    ) -> BenchmarkFailedError:
        """A failure of this worker's benchmark and variant."""
        return BenchmarkFailedError(
            message,
            hint=hint,
            variant=self.variant.name,
            benchmark=self.benchmark.name,
            detail=detail,
        )

    def failed_reply(self, reply: Mapping[str, Any]) -> BenchmarkFailedError:
        """The error a reply without `ok` reports, by the phase it failed in."""
        phase = reply.get("phase", "?")
        if phase == "forked":
            return self.error(
                str(reply.get("error", "")),
                hint="end a child made with os.fork() with os._exit() (or exec another "
                "program), or measure the command instead (--cmd)",
            )
        what = {"setup": "the setup raised", "stmt": "the statement raised"}.get(
            phase, "the worker reported a protocol error"
        )
        return self.error(what, detail=str(reply.get("error", "")).rstrip())

    def silent(
        self, limit_s: float, waiting_for: str, startup_timeout_s: float
    ) -> BenchmarkFailedError:
        """The error of a worker killed for not answering within `limit_s`; `waiting_for`
        ("setup") names what it was doing."""
        if waiting_for == "setup":
            return self.error(
                f"the setup did not finish within {limit_s:g} s and was killed",
                hint="the setup hangs (or loads something very slowly); it runs once "
                f"per worker and may take max(--sample-timeout, {startup_timeout_s:g} s)",
                detail=self.stderr_tail(),
            )
        return self.error(
            f"the worker did not answer within {limit_s:g} s and was killed",
            hint="the statement hangs or one sample is far longer than expected; "
            "raise --sample-timeout if it is legitimately slow",
            detail=self.stderr_tail(),
        )

    def not_the_protocol(self, line: str) -> BenchmarkFailedError:
        """The error of a worker that wrote `line`, which is not perflab's protocol."""
        return self.error(
            f"the worker sent something other than perflab's protocol: {line[:200]!r}",
            hint="is python= a Python interpreter? Does the code write to file "
            "descriptor 1 behind Python's back?",
        )

    def died(self) -> BenchmarkFailedError:
        """The error of a worker whose pipe closed: how it ended, killed if still running."""
        status = self.process.wait(timeout_s=10)
        if status is None:  # stdout closed, yet still running: do not leave it behind
            self.process.kill()
            status = self.process.returncode
        assert status is not None
        tail = self.stderr_tail()
        if status >= 0 and (status == 0 or "Bad file descriptor" in tail):
            # a worker ends only when told to: at status 0, or failing on a closed descriptor,
            # it lost the pipes it talks to perflab through
            return self.error(
                f"the worker process lost its connection to perflab (it exited with status "
                f"{status}): the benchmark's code closed or replaced file descriptors it did "
                "not open (os.closerange, os.dup2 over them)",
                hint="close or redirect only the file descriptors your set-up or statement "
                "opened itself",
                detail=tail.strip().splitlines()[-1] if tail.strip() else None,
            )
        if status >= 0:
            return self.error(f"the worker process exited with status {status}", detail=tail)
        return self.error(
            f"the worker process was killed by signal {-status} ({_signal_name(-status)})",
            hint=CRASH_HINTS.get(-status),
            detail=self.stderr_tail(),
        )
