"""A headless Chromium for the HTML pages' integration tests: the fixture that finds it (or
skips), and a page loaded with its scripts run, any script error failing the test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",  # console messages (script errors) go to stderr
    "--v=0",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    """The Chromium binary; the test is skipped where none is installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (bash scripts/setup.sh --test installs it)")
    return found


def browse(chromium: str, page: Path, tmp: Path, *action: str) -> subprocess.CompletedProcess[str]:
    """Chromium on `page` with `action` (--dump-dom, --screenshot ...), its profile in `tmp`."""
    profile = tmp / "chromium-profile"
    profile.mkdir(exist_ok=True)
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for sign in ("Uncaught", "CONSOLE", "net::ERR_"):
        assert sign not in done.stderr, done.stderr[-3000:]
    return done
