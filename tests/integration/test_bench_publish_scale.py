"""The publish scale bench runs as docs/benchmarks.md shows it, at a small size: it writes its
store through perflab's store API, which it must keep up with (a typed `MachineInfo` broke it
unnoticed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_publishes_three_times(tmp_path: Path) -> None:
    figures = tmp_path / "publish.json"
    done = subprocess.run(
        [sys.executable, "bench/publish_scale.py", "--benchmarks", "3", "--commits", "8"]
        + ["--per-run", "4", "--workers", "1", "--json", str(figures)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(figures.read_text())["rows"]
    assert [row["analysed"] for row in rows] == [2, 0, 1]
    assert rows[1]["written"] == 0
