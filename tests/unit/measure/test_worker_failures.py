"""A worker's failures in words: how it ended, what its failed replies say, its stderr's tail."""

from __future__ import annotations

import signal

from perflab.machine.fake_processes import FakeProcess
from perflab.machine.proc import LaunchSpec
from perflab.measure.worker_failures import CRASH_HINTS, STDERR_TAIL_CHARS, WorkerFailures
from perflab.records.model import Benchmark, Variant

BENCHMARK = Benchmark(name="sum", stmt="sum(range(10))")
VARIANT = Variant("after")


def _failures(*, returncode: int | None, stderr: str = "") -> WorkerFailures:
    process = FakeProcess(
        LaunchSpec(("python",)), replies=lambda line: (), stderr=stderr, returncode=returncode
    )
    return WorkerFailures(process, BENCHMARK, VARIANT)


def test_a_crash_names_its_signal_and_the_native_cause() -> None:
    error = _failures(returncode=-signal.SIGSEGV.value, stderr="Fatal Python error\n").died()
    assert "killed by signal 11 (SIGSEGV)" in error.message
    assert error.hint == CRASH_HINTS[signal.SIGSEGV.value]
    assert error.detail == "Fatal Python error\n"
    assert (error.benchmark, error.variant) == ("sum", "after")


def test_a_worker_that_exits_cleanly_lost_its_pipes() -> None:
    error = _failures(returncode=0, stderr="first\nlast line\n").died()
    assert "lost its connection to perflab" in error.message
    assert error.detail == "last line"


def test_a_worker_still_running_when_its_pipe_closed_is_killed() -> None:
    failures = _failures(returncode=None)
    error = failures.died()
    assert failures.process.returncode == -9 and "signal 9 (SIGKILL)" in error.message


def test_a_failed_reply_says_which_phase_raised() -> None:
    failures = _failures(returncode=None)
    setup = failures.failed_reply({"ok": False, "phase": "setup", "error": "Traceback ...\n"})
    assert (setup.message, setup.detail) == ("the setup raised", "Traceback ...")
    forked = failures.failed_reply({"ok": False, "phase": "forked", "error": "a child returned"})
    assert forked.message == "a child returned" and "os._exit()" in (forked.hint or "")
    assert failures.failed_reply({}).message == "the worker reported a protocol error"


def test_a_silent_worker_is_told_apart_in_its_setup() -> None:
    failures = _failures(returncode=None)
    assert "the setup did not finish within 3 s" in failures.silent(3.0, "setup", 120.0).message
    assert "max(--sample-timeout, 120 s)" in (failures.silent(3.0, "setup", 120.0).hint or "")
    assert "did not answer within 3 s" in failures.silent(3.0, "sample", 120.0).message


def test_the_stderr_tail_keeps_the_last_characters() -> None:
    failures = _failures(returncode=1, stderr="x" * 100 + "\n" + "y" * STDERR_TAIL_CHARS)
    assert failures.stderr_tail() == "y" * STDERR_TAIL_CHARS
