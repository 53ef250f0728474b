"""The bench scripts type-check against src/ (bench/mypy.ini): every figure in
docs/benchmarks.md comes from one of them, and a moved or retyped name in src/ breaks them
without failing anything else (a typed `MachineInfo` crashed the publish scale bench)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_scripts_type_check_against_src() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (perflab[test])")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "bench/mypy.ini"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
