"""Which failing commands the time lens still measures (--ignore-failure)."""

from __future__ import annotations

from perflab.records.settings import Settings


def test_the_time_lens_measures_a_failing_command_with_ignore_failure_and_says_so() -> None:
    from perflab.lenses.time.commands import failure_ignored
    from perflab.measure.commands import CommandRun

    def run(returncode: int | None, timed_out: bool = False) -> CommandRun:
        return CommandRun(
            wall_ns=1000,
            returncode=returncode,
            timed_out=timed_out,
            user_ns=0,
            sys_ns=0,
            maxrss_kb=0,
            cpu=None,
            stderr_tail="",
        )

    ignore = Settings(ignore_failure=True).ignore_failure
    assert failure_ignored(run(3), ignore_failure=ignore)
    assert not failure_ignored(run(0), ignore_failure=ignore)  # nothing to ignore
    # killed by a signal: not the command's time
    assert not failure_ignored(run(-9), ignore_failure=ignore)
    assert not failure_ignored(run(None, timed_out=True), ignore_failure=ignore)
    assert not failure_ignored(run(3), ignore_failure=Settings().ignore_failure)
