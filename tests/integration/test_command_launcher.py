"""The command launcher starts commands as a shell would (PATH from the command's environment,
its working directory) and reads whatever they write to stderr without blocking them."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.commands import CommandLauncher
from perflab.records.errors import BenchmarkFailedError

pytestmark = pytest.mark.integration


@pytest.fixture
def launcher() -> CommandLauncher:
    return CommandLauncher(SubprocessRunner(), cpu=max(os.sched_getaffinity(0)))


def test_a_command_writing_a_megabyte_to_stderr_is_not_blocked(launcher: CommandLauncher) -> None:
    big = "head -c 1000000 /dev/zero | tr '\\0' x >&2"
    with launcher:
        run = launcher.run(("/bin/sh", "-c", big), env=dict(os.environ), cwd=None, timeout_s=30)
    assert run.returncode == 0  # a writer that met a full pipe would fail (EAGAIN)
    assert run.stderr_tail == "x" * 4000


def test_programs_are_found_in_the_cwd_and_on_the_command_s_path(
    launcher: CommandLauncher, tmp_path: Path
) -> None:
    program = tmp_path / "prog"
    program.write_text("#!/bin/sh\necho from-prog >&2\nexit 3\n")
    program.chmod(0o755)
    env = dict(os.environ)
    with launcher:
        relative = launcher.run(("./prog",), env=env, cwd=str(tmp_path), timeout_s=30)
        on_path = launcher.run(("prog",), env=dict(env, PATH=str(tmp_path)), cwd=None,
                               timeout_s=30)  # fmt: skip
        with pytest.raises(BenchmarkFailedError, match="No such file"):
            launcher.run(("prog",), env=env, cwd=None, timeout_s=30)
        with pytest.raises(BenchmarkFailedError, match="no-such-dir"):
            launcher.run(("true",), env=env, cwd=str(tmp_path / "no-such-dir"), timeout_s=30)
        after = launcher.run(("./prog",), env=env, cwd=str(tmp_path), timeout_s=30)
    for run in (relative, on_path, after):
        assert (run.returncode, run.stderr_tail) == (3, "from-prog\n")


def test_a_command_past_its_timeout_is_killed(launcher: CommandLauncher) -> None:
    with launcher:
        run = launcher.run(("sleep", "30"), env=dict(os.environ), cwd=None, timeout_s=0.5)
    assert run.timed_out and run.returncode == -9


def test_a_failed_command_with_a_lingering_child_is_reported_at_once(
    launcher: CommandLauncher,
) -> None:
    """`sh -c 'sleep 30 & exit 3'`: the child holds the stderr pipe open; the launcher stops
    it and reads the tail without waiting for the end of the pipe (a behaviour, not a timing:
    its drain waits up to 1 s)"""
    marker = f"perflab-lingering-{uuid.uuid4().hex}"
    script = f"echo before-exit >&2; exec -a {marker} sleep 30 & exit 3"
    with launcher:
        started = time.monotonic()
        run = launcher.run(("bash", "-c", script), env=dict(os.environ), cwd=None, timeout_s=30)
        took_s = time.monotonic() - started
    assert (run.returncode, run.stderr_tail) == (3, "before-exit\n")
    assert took_s < 1.0
    assert not _running(marker)


def _running(marker: str) -> bool:
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in entry.read_bytes():
                return True
        except OSError:
            continue  # ended meanwhile
    return False
