"""How the CLI tests run perflab as a user types it: its own process, in a folder of the
test's, with settings that keep a run short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# a run's settings that keep it short: a test checks behaviour, not precision
FAST = [
    "--budget", "0.3", "--min-generations", "2", "--sample-ms", "1", "--seed", "3",
]  # fmt: skip


def perflab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m perflab.cli.main ARGS` in `cwd`, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
