"""The torch lens's own worker op (torch_profile) with the real torch, inside a real worker."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perflab.lenses.torch.measure import WORKER_OPS, torch_profile
from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerOps
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Variant

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.integration


def test_the_worker_profiles_the_loop_with_torch_profiler() -> None:
    benchmark = Benchmark("relu", stmt="torch.relu(x)", setup="import torch; x = torch.randn(16)")
    with StatementWorker.start(
        SubprocessRunner(),
        benchmark,
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=60),
        ops=(WorkerOps.from_module(WORKER_OPS),),
    ) as worker:
        table = torch_profile(worker, 20)
    ops = {op.name: op for op in table.ops}
    # relu is implemented by clamp_min: the op table shows the call path below the Python call
    assert {"aten::relu", "aten::clamp_min"} <= set(ops)
    assert ops["aten::relu"].count == 20
    assert ops["aten::relu"].cpu_us >= ops["aten::relu"].self_cpu_us > 0
    assert table.loops == 20 and table.wall_ns > 0
    assert table.torch_version == str(torch.__version__)
    assert table.cpu_capability  # e.g. "AVX512" here


def test_a_variant_without_torch_fails_with_a_clear_error(tmp_path: Path) -> None:
    # a torch that cannot be imported, shadowing the real one for this variant only
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('no torch here')\n")
    variant = Variant("no-torch", env={"PYTHONPATH": str(tmp_path)})
    with StatementWorker.start(
        SubprocessRunner(),
        Benchmark("pass", stmt="pass"),
        variant,
        WorkerLaunch(sys.executable, cpu=None, timeout_s=60),
        ops=(WorkerOps.from_module(WORKER_OPS),),
    ) as worker:
        with pytest.raises(BenchmarkFailedError, match="torch cannot be imported") as caught:
            torch_profile(worker, 10)
        assert worker.process.poll() is None  # the worker survives and can still be used
    error = caught.value
    assert error.variant == "no-torch" and error.benchmark == "pass"
    assert error.detail is not None and "no torch here" in error.detail
    assert error.hint is not None and "--metric torch" in error.hint


def test_a_fork_server_warms_the_profiler_once_for_every_child() -> None:
    """The first torch.profiler session of a process initialises the profiler (a second or
    more); run once in the server, every child forked after it starts warm, and profiles the
    same ops as a fresh worker would."""
    benchmark = Benchmark(
        "add", stmt="torch.add(x, y)", setup="import torch; x = y = torch.ones(1)"
    )
    ops = WorkerOps.from_module(WORKER_OPS)
    server = ForkServerClient(
        SubprocessRunner(),
        benchmark,
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=60),
    )
    try:
        warmed = server.call(ops, {"op": "torch_warm"})
        assert warmed["ok"] and warmed["wall_ns"] > 0
        with server.worker(ops=(ops,)) as child:
            table = torch_profile(child, 20)
    finally:
        server.close()
    ops_seen = {op.name: op for op in table.ops}
    assert ops_seen["aten::add"].count == 20
