"""A build command run under a child subreaper of its own (worker/build_reaper.py). The reaper stops
what the build left running when it ends: a daemon that left the build's session and cleared its
environment is found there too, also where perflab is no subreaper (the Python API). It also
enforces the build's time limit itself, so that a build that runs out of time is stopped with
everything it left; the runner's own limit is only a backstop."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping

from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.worker import BUILD_REAPER_PATH
from perflab.worker.process_tree import REAPER_SAID, REAPER_TIMED_OUT, TERM_GRACE_S

# the runner kills the reaper only if the reaper did not stop the build by then: the reaper's
# own stopping (at most a few seconds, process_tree) plus the interpreter's start
BACKSTOP_MARGIN_S = 30.0


def run_build(
    runner: ProcessRunner,
    command: str,
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    timeout_s: float | None,
) -> Completed:
    """`command` run by /bin/sh under the reaper; `left` counts what the reaper stopped and
    what the runner found after it. Its argv and stderr are the build's own."""
    shell = ("/bin/sh", "-c", command)
    # -E -S: the build's environment (PYTHONPATH, PYTHONSTARTUP) is the build's, not the reaper's
    limit = "none" if timeout_s is None else repr(float(timeout_s))
    reaper = (sys.executable, "-E", "-S", str(BUILD_REAPER_PATH), limit, *shell)
    backstop_s = None if timeout_s is None else timeout_s + TERM_GRACE_S + BACKSTOP_MARGIN_S
    done = runner.run(LaunchSpec(argv=reaper, env=env, cwd=cwd), timeout_s=backstop_s)
    report = reaper_report(done.stderr)
    timed_out = done.timed_out or report.stopped_the_build
    return dataclasses.replace(
        done,
        argv=shell,
        stderr=report.stderr,
        left=done.left + report.left,
        returncode=None if timed_out else done.returncode,
        timed_out=timed_out,
    )


@dataclasses.dataclass(frozen=True)
class ReaperReport:
    """What the reaper's last line said, taken off the build's own stderr."""

    stderr: str  # the build's own
    left: int  # processes the reaper stopped as the build ended (or as it stopped the build)
    stopped_the_build: bool  # it ran past its time limit (or the reaper got SIGTERM)


def reaper_report(stderr: str) -> ReaperReport:
    """The reaper's last line says; a reaper that was killed (the backstop, Ctrl-C) said
    nothing: nothing left, the build not stopped by it."""
    for said, stopped in ((REAPER_SAID, False), (REAPER_TIMED_OUT, True)):
        before, found, rest = stderr.rpartition("\n" + said)
        number = rest.removesuffix("\n")
        if found and number.isdigit():
            return ReaperReport(before, int(number), stopped)
    return ReaperReport(stderr, 0, False)
