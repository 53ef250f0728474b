"""scripts/setup.sh refuses an option it does not know, naming every one it does (no install is
run: the options are checked before anything is touched)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "setup.sh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_an_unknown_option_lists_the_extras_one_can_ask_for() -> None:
    done = subprocess.run(
        ["bash", str(SETUP), "--bogus"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "unknown option --bogus" in done.stderr
    for option in ("--test", "--bench", "--torch", "--browser", "--team", "--cluster"):
        assert option in done.stderr
