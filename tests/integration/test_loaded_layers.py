"""The layer rule at run time (tests/unit/cross/test_layers.py checks it in the source): what
importing the renderers, the store and measure/ really loads, in a fresh interpreter so that
modules other tests imported do not hide an edge."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.source_imports import MODULES, PENDING

pytestmark = pytest.mark.integration


def test_importing_the_renderers_store_and_measure_loads_no_engine_api_cli_or_lens() -> None:
    """The same contract at run time: what `import` really loads."""
    pending = {module for module, _ in PENDING}
    modules = [
        m
        for m in MODULES
        if m.startswith(("perflab.report", "perflab.store", "perflab.measure")) and m not in pending
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    bad = [
        m
        for m in loaded
        if m.startswith(("perflab.engine", "perflab.api", "perflab.cli", "perflab.lenses"))
    ]
    assert not bad, bad
