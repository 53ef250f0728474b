"""How the CLI, fault and integration tests run perflab as a user types it: its own process, in a
folder of the test's, with settings that keep a run short."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

# the fewest measurements a run may take: a test checks behaviour, not precision
QUICK = ["--min-generations", "2", "--sample-ms", "1", "--seed", "3"]
# QUICK within a small budget, for tests whose budget is not their subject
FAST = ["--budget", "0.3", *QUICK]

# what would make `check` a CI run or name its base: a test drops them so that it decides
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "GITHUB_BASE_REF",
                "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")  # fmt: skip

# perflab as `python -m` starts it: every test launch goes through this, so one place says how
COMMAND = [sys.executable, "-m", "perflab.cli.main"]


def perflab(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    without: Iterable[str] = (),
    timeout_s: float = 600,
) -> subprocess.CompletedProcess[str]:
    """`python -m perflab.cli.main ARGS` in `cwd`, its output captured as text. Its environment
    is this process's with the variables in `without` dropped (a developer's PERFLAB_STORE, a
    CI's variables) and `env` added. `timeout_s` is a hang's, not a run's budget: the slowest
    command (a bisect through valgrind) takes minutes on a loaded machine."""
    dropped = set(without)
    environ = {k: v for k, v in os.environ.items() if k not in dropped}
    return subprocess.run(
        [*COMMAND, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**environ, **(env or {})},
    )


def start_perflab(*args: str, cwd: Path, **popen: object) -> subprocess.Popen[str]:
    """perflab started and not waited for, with `popen`'s pipes and flags: for a test that
    signals it, reads beside it or starts a second one while it runs."""
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [*COMMAND, *args], cwd=cwd, text=True, **popen
    )


def flat(text: str) -> str:
    """The text with its line breaks (the terminal's wrapping) as single spaces."""
    return " ".join(text.split())
