"""Copies of the statement worker that the benchmark's code forks: a copy never answers on the
protocol's channel, so every reply the parent reads is its own request's, and a copy that
returns into the worker is reported by the request whose code forked it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import StatementWorker, WorkerLaunch
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Variant

pytestmark = pytest.mark.integration

_LAUNCH = WorkerLaunch(sys.executable, cpu=None, timeout_s=30)


def _worker(setup: str, stmt: str = "pass") -> StatementWorker:
    return StatementWorker.start(
        SubprocessRunner(), Benchmark("forks", stmt=stmt, setup=setup), Variant("A"), _LAUNCH
    )


def test_a_set_up_whose_copy_comes_back_a_little_later_fails_the_set_up() -> None:
    """the copy lingers in the set-up, then returns into the worker: the set-up's own reply
    says so (it was "ok", and the copy was found by a later request, or never)"""
    setup = "import os, time\nif os.fork() == 0:\n    time.sleep(0.1)"
    with pytest.raises(BenchmarkFailedError, match="the set-up forked a copy of the worker"):
        _worker(setup).close()


def test_a_copy_forked_by_a_check_expression_never_answers() -> None:
    """the copy returns into the worker with a value of its own (0): it must not reply, or the
    parent reads it as the answer to its next request"""
    with _worker("import os") as worker:
        forked = worker.call({"op": "evaluate", "expr": "os.fork()"})
        assert forked["phase"] == "forked" and "--check expression" in forked["error"]
        for text in ("second", "third"):
            reply = worker.call({"op": "evaluate", "expr": repr(text)})
            assert reply["value"]["text"] == text


def test_a_fork_servers_set_up_import_that_forks_is_named(tmp_path: Path) -> None:
    """a module the set-up imports forks a copy as it loads (in the fork server's preload): the
    preload says so, and the copy never serves the protocol beside the server"""
    (tmp_path / "forky.py").write_text("import os\nos.fork()\n")
    variant = Variant("A", env={"PYTHONPATH": str(tmp_path)})
    benchmark = Benchmark("forks", stmt="pass", setup="import forky")
    with pytest.raises(BenchmarkFailedError, match="importing the setup's modules failed") as e:
        ForkServerClient(SubprocessRunner(), benchmark, variant, _LAUNCH).close()
    assert "the set-up forked a copy of the worker" in str(e.value.detail)


def test_a_set_up_with_a_forked_process_pool_is_measured() -> None:
    """multiprocessing's children (fork start method) are the set-up's, not copies: they run
    the statement's tasks while the worker answers every request in step"""
    setup = "import multiprocessing\npool = multiprocessing.get_context('fork').Pool(2)"
    with _worker(setup, stmt="pool.apply(abs, (-3,))") as worker:
        assert worker.calibrate(1000) >= 1
        reply = worker.call({"op": "evaluate", "expr": "pool.apply(abs, (-2,))"})
        assert reply["value"]["text"] == "2"
