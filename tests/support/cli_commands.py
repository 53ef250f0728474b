"""How the CLI tests run perflab as a user types it: its own process, in a folder of the
test's, with settings that keep a run short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# a run's settings that keep it short: a test checks behaviour, not precision
FAST = [
    "--budget", "0.3", "--min-generations", "2", "--sample-ms", "1", "--seed", "3",
]  # fmt: skip


def perflab(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m perflab.cli.main ARGS` in `cwd`, with `env` added to this process's
    environment, its output captured as text. The timeout is a hang's, not a run's budget: the
    slowest command (a bisect through valgrind) takes minutes on a loaded machine."""
    return subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )
