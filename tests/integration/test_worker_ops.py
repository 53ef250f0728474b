"""A lens's own worker ops, registered in a real statement worker (no torch needed)."""

from __future__ import annotations

import sys

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerOps
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Variant

pytestmark = pytest.mark.integration

OPS = """
def count_loops(worker, request):
    loops = int(request["loops"])
    return {"ok": True, "loops": loops, "wall_ns": worker.timed(loops), "extra": request["extra"]}


def broken(worker, request):
    raise RuntimeError("a bug in the lens's op")


OPS = {"count_loops": count_loops, "broken": broken}
"""


def _worker(ops: WorkerOps) -> StatementWorker:
    return StatementWorker.start(
        SubprocessRunner(),
        Benchmark("sum", stmt="sum(range(10))"),
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
        ops=(ops,),
    )


def test_a_registered_op_gets_its_payload_and_times_the_loop() -> None:
    with _worker(WorkerOps("toy", OPS)) as worker:
        reply = worker.call({"op": "count_loops", "loops": 50, "extra": [1, "two"]})
        assert reply["ok"] and reply["loops"] == 50 and reply["wall_ns"] > 0
        assert reply["extra"] == [1, "two"]
        failed = worker.call({"op": "broken"})
        assert not failed["ok"] and "a bug in the lens's op" in failed["error"]
        # the core ops still work after a lens op failed
        assert worker.calibrate(1000) >= 1


def test_ops_that_do_not_compile_fail_the_benchmark_with_the_traceback() -> None:
    with pytest.raises(BenchmarkFailedError, match="the toy worker ops do not run") as caught:
        _worker(WorkerOps("toy", "OPS = {'x': lambda w, r: (}"))
    assert "SyntaxError" in (caught.value.detail or "")
