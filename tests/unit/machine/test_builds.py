"""A build runs under its reaper: the build's own argv and stderr come back, and `left` adds
what the reaper stopped to what the runner found."""

from __future__ import annotations

from perflab.machine.builds import ReaperReport, reaper_report, run_build
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.worker import BUILD_REAPER_PATH
from perflab.worker.process_tree import REAPER_SAID, REAPER_TIMED_OUT


def test_the_reapers_last_line_is_taken_off_the_builds_stderr() -> None:
    assert reaper_report(f"warning: x\n\n{REAPER_SAID}2\n") == ReaperReport(
        "warning: x\n", 2, False
    )
    assert reaper_report(f"no newline\n{REAPER_SAID}0\n") == ReaperReport("no newline", 0, False)


def test_a_reaper_that_said_nothing_stopped_nothing() -> None:
    """Killed (a timeout, Ctrl-C) before its last line; or a build writing the words itself."""
    assert reaper_report("error: x\n") == ReaperReport("error: x\n", 0, False)
    assert reaper_report(f"\n{REAPER_SAID}many\n") == ReaperReport(
        f"\n{REAPER_SAID}many\n", 0, False
    )


def test_a_build_the_reaper_stopped_at_its_limit_timed_out() -> None:
    def reply(spec: LaunchSpec, stdin: str | None) -> Completed:
        return Completed(spec.argv, 124, "", f"half\n\n{REAPER_TIMED_OUT}1\n", 10)

    runner = FakeRunner().on_run(r"make all", reply)
    done = run_build(runner, "make all", env=None, cwd=None, timeout_s=5)
    ((spec, _),) = runner.calls
    assert spec.argv[-4] == "5.0"  # the reaper enforces the limit
    assert (done.timed_out, done.returncode, done.stderr, done.left) == (True, None, "half\n", 1)
    assert done.describe_failure() == "timed out and was killed"


def test_run_build_runs_the_shell_under_the_reaper() -> None:
    def reply(spec: LaunchSpec, stdin: str | None) -> Completed:
        return Completed(spec.argv, 2, "out\n", f"err\n\n{REAPER_SAID}3\n", 10, left=1)

    runner = FakeRunner().on_run(r"make all", reply)
    done = run_build(runner, "make all", env={"A": "1"}, cwd="/src", timeout_s=5)
    ((spec, _),) = runner.calls
    assert str(BUILD_REAPER_PATH) in spec.argv
    assert spec.argv[-3:] == ("/bin/sh", "-c", "make all") and spec.cwd == "/src"
    assert (done.argv, done.returncode, done.stdout, done.stderr, done.left) == (
        ("/bin/sh", "-c", "make all"), 2, "out\n", "err\n", 4,
    )  # fmt: skip
