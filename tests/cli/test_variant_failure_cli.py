"""A statement that raises in one variant leaves the others measured by the time lens, from the
command line: the failing variant is named with its error, the comparison without it kept,
status 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_a_variant_whose_statement_raises_leaves_the_others_compared(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run",
         "--stmt", "1 / int(os.environ.get('D', '1'))", "--setup", "import os",
         "-v", "a", "-v", "b env.D=0", "-v", "c env.D=2", "--budget", "3",
         "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json"), "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "variant 'b': the statement raised" in done.stderr
    assert "ZeroDivisionError" in done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    compared = [(c["baseline"], c["variant"]) for c in document["comparisons"]]
    assert compared == [("a", "c")]
