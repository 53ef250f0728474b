"""A build command run under a child subreaper of its own (worker/build_reaper.py). The reaper stops
what the build left running when it ends: a daemon that left the build's session and cleared its
environment is found there too, also where perflab is no subreaper (the Python API)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping

from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.worker import BUILD_REAPER_PATH
from perflab.worker.process_tree import REAPER_SAID


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
    reaper = (sys.executable, "-E", "-S", str(BUILD_REAPER_PATH), *shell)
    done = runner.run(LaunchSpec(argv=reaper, env=env, cwd=cwd), timeout_s=timeout_s)
    stderr, stopped = reaper_report(done.stderr)
    return dataclasses.replace(done, argv=shell, stderr=stderr, left=done.left + stopped)


def reaper_report(stderr: str) -> tuple[str, int]:
    """The build's own stderr, and how many processes the reaper stopped as it ended: its last
    line says; a reaper that was killed (a timeout, Ctrl-C) said nothing: 0."""
    before, found, said = stderr.rpartition("\n" + REAPER_SAID)
    number = said.removesuffix("\n")
    if not found or not number.isdigit():
        return stderr, 0
    return before, int(number)
