"""Waiting for a live process with a time limit: woken by its exit (a pidfd), not by a look every
50 ms; still running at the limit is None, and a process already reaped answers at once."""

from __future__ import annotations

import sys

import pytest

from perflab.machine.proc import LaunchSpec, SubprocessRunner

pytestmark = pytest.mark.integration


def test_a_wait_ends_when_the_process_does_and_none_at_its_limit() -> None:
    process = SubprocessRunner().spawn(
        LaunchSpec(argv=(sys.executable, "-c", "import sys; sys.stdin.readline()"))
    )
    try:
        assert process.wait(0.2) is None  # still running at the limit
        process.write_line("go")
        assert process.wait(30.0) == 0
        assert process.wait(30.0) == 0  # reaped already: at once
    finally:
        process.kill()
        process.close()
