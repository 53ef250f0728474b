"""`--strict-budget` refuses a budget too small before starting, on the command line (the
default measures the minimums anyway: tests/integration/test_budget.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_commands import perflab

pytestmark = pytest.mark.integration

SLOW_SETUP = ("--setup", "import time; time.sleep(0.3)")  # every fresh worker: 0.3 s


def test_strict_a_budget_too_small_is_refused_with_status_2_and_nothing_stored(
    tmp_path: Path,
) -> None:
    done = perflab(
        "run", "--stmt", "pass", *SLOW_SETUP, "-v", "A", "-v", "B",
        "--budget", "0.5", "--min-generations", "2", "--sample-ms", "1", "--strict-budget",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    message = " ".join(done.stderr.split())
    assert "--budget 0.5 s is too small" in message
    assert "the time lens alone needs" in message
    assert "would fit" in message
    assert "leave out --strict-budget" in message and "--metric" in message
    # the command's own start-up is counted, and the machine's speed was measured
    assert "perflab's start-up" in message and "a reference process took" in message
    listed = perflab("list", cwd=tmp_path)
    assert "run 1" not in listed.stdout
