"""The preemption coverage bench runs as docs/benchmarks.md shows it (a few runs, one pattern)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "coverage.md"
    done = subprocess.run(
        [
            sys.executable,
            "bench/preemption_coverage.py",
            "--runs",
            "2",
            "--patterns",
            "rare 2%",
            "--out",
            str(out),
        ],  # fmt: skip
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in out.read_text().splitlines() if line.startswith("| rare 2% |")]
    assert [row.split(" | ")[1] for row in rows] == ["1", "1.03", "1.6"]
    assert all("| 2 |" in row for row in rows)
