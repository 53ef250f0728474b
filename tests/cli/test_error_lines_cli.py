"""An error written to a file or a CI log (stderr not a terminal) is never wrapped: a path in
it stays on one line, whole, so it can be copied."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support import cli_commands

LONG_NAME = "f" * 150  # wider than rich's 80-column default, and than the reports' 140


def perflab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The terminal's default width (the lines' wrapping is the subject) and no developer's
    store."""
    return cli_commands.perflab(*args, cwd=cwd, without=("PERFLAB_STORE", "COLUMNS"))


def _line_holding(path: Path, stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if str(path) in line]
    assert lines, f"no line of stderr holds {path} whole:\n{stderr}"
    return lines[0]


def test_a_broken_project_file_is_named_on_one_line(tmp_path: Path) -> None:
    """Read while the command line is parsed, before the run's consoles exist."""
    project = tmp_path / LONG_NAME
    (project / ".git").mkdir(parents=True)
    (project / "pyproject.toml").write_text("store = [\n")
    listed = perflab("list", cwd=project)
    assert listed.returncode == 2
    line = _line_holding(project / "pyproject.toml", listed.stderr)
    assert "cannot be read as TOML" in line and "Traceback" not in listed.stderr


def test_a_missing_experiment_file_is_named_on_one_line(tmp_path: Path) -> None:
    missing = tmp_path / LONG_NAME / "experiment.toml"
    ran = perflab("run", str(missing), "--store", str(tmp_path / "perflab.db"), cwd=tmp_path)
    assert ran.returncode == 2
    assert "does not exist" in _line_holding(missing, ran.stderr)
