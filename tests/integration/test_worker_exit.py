"""How a statement worker leaves when told to quit: what the set-up registered to run at exit
runs, the set-up's objects are finalised, and threads it left running are waited for; only the
imported modules' teardown is skipped (it took 0.3-0.7 s per torch process)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.worker_client import StatementWorker, WorkerLaunch
from perflab.records.model import Benchmark, Variant

pytestmark = pytest.mark.integration


def _run_worker(setup: str) -> int | None:
    worker = StatementWorker.start(
        SubprocessRunner(),
        Benchmark("exit", stmt="pass", setup=setup),
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
    )
    with worker:
        assert worker.calibrate(1000) >= 1
    return worker.process.returncode


def test_quit_runs_the_set_ups_exit_functions(tmp_path: Path) -> None:
    marker = tmp_path / "atexit"
    setup = f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))"
    assert _run_worker(setup) == 0
    assert marker.read_text() == "ran"


def test_quit_waits_for_a_thread_the_set_up_left_running(tmp_path: Path) -> None:
    marker = tmp_path / "thread"
    setup = (
        "import threading, time\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(marker)!r}, 'w').write('ran')\n"
        "threading.Thread(target=late).start()"
    )
    assert _run_worker(setup) == 0
    assert marker.read_text() == "ran"


def test_quit_finalises_what_the_set_up_holds(tmp_path: Path) -> None:
    """A NamedTemporaryFile held by a set-up's name removes its file when freed: as at the
    interpreter's teardown, so a worker that skips it leaves no file behind."""
    setup = (
        "import tempfile\n"
        f"held = tempfile.NamedTemporaryFile(dir={str(tmp_path)!r}, prefix='held-')\n"
        "held.write(b'x')"
    )
    assert _run_worker(setup) == 0
    assert list(tmp_path.glob("held-*")) == []
