"""Budgets and inputs that cannot run away: slow variants are measured within the budget,
non-finite numbers are refused, experiment files get the command line's checks, and failures
say what failed (the setup, a segfault, a non-Python interpreter)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.faults.running import QUICK, processes_left, run, runs, samples

pytestmark = pytest.mark.integration


def test_variant_thousands_of_times_slower(tmp_path: Path) -> None:
    """A variant thousands of times slower than the baseline, with a short sample timeout"""
    started = time.monotonic()
    code, _, err, perflab = run(
        "run", "--stmt", "d and time.sleep(d)",
        "--setup", "import os, time; d = float(os.environ['D'])",
        "-v", "fast env.D=0", "-v", "slow env.D=0.005", "--budget", "1", "--sample-timeout", "2",
        *QUICK, "--json", "out.json", "-q", cwd=tmp_path,
    )  # fmt: skip
    elapsed_s = time.monotonic() - started
    assert code == 0, err
    (comparison,) = json.loads((tmp_path / "out.json").read_text())["comparisons"]
    assert comparison["verdict"] == "slower" and comparison["ratio"] > 100
    ((run_id, status),) = runs(tmp_path)
    assert status == "complete" and samples(tmp_path, run_id) > 0
    # with the baseline's loop count one sample of the slow variant would take minutes
    assert elapsed_s < 120
    assert processes_left(perflab) == []
