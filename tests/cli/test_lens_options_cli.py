"""A lens's option, declared by its descriptor, reaches the lens from the command line; a
retired option is still accepted, with a warning."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.lenses.instructions import DESCRIPTOR as INSTRUCTIONS
from perflab.lenses.shared_options import CACHE_SIM

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind"),
]


def test_cache_sim_reaches_the_instructions_lens_and_the_retired_flag_warns(
    tmp_path: Path,
) -> None:
    assert CACHE_SIM in INSTRUCTIONS.options and CACHE_SIM.spec.flags == ("--cache-sim",)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab.cli.main",
            "run",
            "--cmd",
            "true",
            "-v",
            "A",
            "-v",
            "B",
            "--metric",
            "instructions",
            "--cache-sim",
            "--budget",
            "1",
            "--min-measurements-anyway",
            "--store",
            "p.db",
            "--json",
            "out.json",
        ],  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "perflab: warning: min_measurements_anyway (--min-measurements-anyway) is deprecated"
        in done.stderr
    )
    assert "FutureWarning" not in done.stderr  # said as perflab's line, not Python's
    run = json.loads((tmp_path / "out.json").read_text())
    # stored where it always was, beside the core settings; the retired one as false
    assert run["settings"]["cache_sim"] is True
    assert run["settings"]["min_measurements_anyway"] is False
    # the lens simulated the caches: it compares the variants' simulated misses
    events = {c.get("event") for c in run["comparisons"] if c["metric"] == "instructions"}
    assert "D1_misses" in events
