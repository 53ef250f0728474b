from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perflab.config import settings_with
from perflab.model import Settings

# Small budgets: tests check behaviour, not precision (bench/ measures that).
FAST = settings_with(
    Settings(),
    budget_s=0.5,
    min_generations=2,
    sample_target_ms=1.0,
    warmup_blocks=1,
    sample_timeout_s=20,
    seed=1,
)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second interpreter without perflab (nor pip) installed: a venv of its own."""
    root = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return root / "bin" / "python"
