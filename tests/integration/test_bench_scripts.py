"""The bench scripts behind docs/benchmarks.md keep working as src/ changes: they type-check
against it (bench/mypy.ini), and two run as the docs show them at a small size (a moved or
retyped name in src/ broke them without failing anything else: a typed `MachineInfo` crashed the
publish scale bench)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    """`python ARGS` from the repository's root, perflab from src/."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_bench_scripts_type_check_against_src() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (perflab[test])")
    done = _bench("-m", "mypy", "--config-file", "bench/mypy.ini")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_preemption_coverage_bench_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "coverage.md"
    done = _bench(
        "bench/preemption_coverage.py", "--runs", "2", "--patterns", "rare 2%", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in out.read_text().splitlines() if line.startswith("| rare 2% |")]
    assert [row.split(" | ")[1] for row in rows] == ["1", "1.03", "1.6"]
    assert all("| 2 |" in row for row in rows)


def test_the_publish_scale_bench_publishes_three_times(tmp_path: Path) -> None:
    figures = tmp_path / "publish.json"
    done = _bench(
        "bench/publish_scale.py", "--benchmarks", "3", "--commits", "8", "--per-run", "4",
        "--workers", "1", "--json", str(figures),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(figures.read_text())["rows"]
    assert [row["analysed"] for row in rows] == [2, 0, 1]
    assert rows[1]["written"] == 0
