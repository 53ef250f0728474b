"""The README's commands work as written: its "Next" block runs through the CLI, line by line,
in a fresh directory; its second command is the one CI runs (.ci/run calls it verbatim)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _block_after(heading: str) -> list[str]:
    """The command lines of the first `sh` block after `heading`, comments dropped."""
    block = re.search(r"```sh\n(.*?)```", README[README.index(heading) :], re.DOTALL)
    assert block, f"no sh block after {heading!r} in README.md"
    lines = (line.split("  #")[0].strip() for line in block.group(1).splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readmes_second_command_verbatim() -> None:
    lines = README.splitlines()
    second = lines[next(i for i, line in enumerate(lines) if line.startswith("# 2. ")) + 1]
    assert second == "bash scripts/setup.sh --test && .venv/bin/python -m pytest"
    assert second in (ROOT / ".ci/run").read_text().splitlines()


@pytest.mark.integration
def test_the_next_steps_run_as_written(tmp_path: Path) -> None:
    for line in _block_after("## Next"):
        words = shlex.split(line)
        assert words[0] == "perflab", line
        done = subprocess.run(
            [sys.executable, "-m", "perflab.cli.main", *words[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "report.html").is_file()
