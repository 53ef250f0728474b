"""GPU runtimes and fork: a server that initialised one forks nothing, workers are started
fresh instead (said in a note), and a statement that launched device work is timed until the
device is done.

No GPU is needed: a stand-in `torch` package whose `cuda.is_initialized()` is true plays the
runtime's part in the variant's own interpreter (the real thing runs in tests marked `gpu`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from perflab.budget.machine_speed import MachineSpeed
from perflab.engine.prepare.probe import ProbeHost, probe_benchmark
from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient, ForkServers
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.measure.session import LensSession
from perflab.measure.worker_client import WorkerLaunch
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.worker import statement_loop
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration

# torch.cuda as a process that initialised CUDA sees it; each synchronize() leaves a line
_STAND_IN_TORCH = """
import os


class _Cuda:
    def is_initialized(self):
        return True

    def synchronize(self):
        with open(os.environ["SYNC_LOG"], "a") as log:
            log.write("sync\\n")


cuda = _Cuda()
"""


# ... one whose CUDA starts only when the set-up asks (`torch.cuda.init()`), as a real one does
# at the first tensor on the device
_LAZY_STAND_IN_TORCH = """
class _Cuda:
    started = False

    def init(self):
        _Cuda.started = True

    def is_initialized(self):
        return _Cuda.started


cuda = _Cuda()
"""


@pytest.fixture
def cuda_variant(tmp_path: Path) -> Variant:
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_STAND_IN_TORCH)
    log = tmp_path / "sync.log"
    return Variant("gpu", env={"PYTHONPATH": str(tmp_path / "site"), "SYNC_LOG": str(log)})


def _benchmark() -> Benchmark:
    return Benchmark("launch", stmt="x = 1", setup="import torch")


def test_device_files_among_open_files_name_their_runtime(tmp_path: Path) -> None:
    fds = tmp_path / "fd"
    fds.mkdir()
    (fds / "3").symlink_to("/dev/null")
    assert statement_loop.device_runtimes(str(fds)) == []
    (fds / "4").symlink_to("/dev/nvidiactl")
    (fds / "5").symlink_to("/dev/kfd")
    assert statement_loop.device_runtimes(str(fds)) == ["cuda", "rocm"]


def test_a_server_whose_imports_initialised_cuda_forks_nothing(cuda_variant: Variant) -> None:
    server = ForkServerClient(
        SubprocessRunner(),
        _benchmark(),
        cuda_variant,
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
    )
    try:
        assert server.device_runtimes == ("cuda",)
        # the worker's own guard, should a caller ask anyway
        server._send({"op": "fork", "env": {}, "padding": 0})
        reply = server._receive(30)
        assert reply["ok"] is False and reply["phase"] == "fork", reply
        assert "cuda" in reply["error"]
    finally:
        server.close()


def test_a_session_starts_fresh_workers_where_a_server_initialised_cuda(
    cuda_variant: Variant,
) -> None:
    experiment = Experiment(benchmarks=(_benchmark(),), variants=(cuda_variant,), settings=FAST)
    sink = MemorySink()
    runner = SubprocessRunner()
    with ForkServers(
        runner,
        _benchmark(),
        experiment.variants,
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30, extra_env={}, disable_aslr=False),
    ).started() as servers:
        context = LensContext(
            experiment=experiment,
            runner=runner,
            sink=sink,
            progress=NullProgress(),
            cpu=None,
            default_python=sys.executable,
            fork_servers=servers,
        )
        session = LensSession(_benchmark(), context, lambda: 0)
        with session.generation() as (worker,):
            assert worker.pid != servers.server(0).process.pid
            assert worker.info.device_synchronised == "cuda"
            assert worker.info.device_runtimes == ("cuda",)
        assert servers.forked == 0
    (note,) = sink.notes
    assert "cuda was initialised in the fork server of gpu" in note.message
    assert "fresh worker" in note.message


def test_samples_wait_for_the_device_where_cuda_was_initialised(cuda_variant: Variant) -> None:
    from perflab.measure.worker_client import StatementWorker

    log = Path(cuda_variant.env["SYNC_LOG"])
    with StatementWorker.start(
        SubprocessRunner(),
        _benchmark(),
        cuda_variant,
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
    ) as worker:
        before = len(log.read_text().splitlines()) if log.exists() else 0
        worker.sample(10)
        after = len(log.read_text().splitlines())
    # one synchronisation before each of the loop's two clock readings
    assert after - before == 2
    assert os.environ.get("SYNC_LOG") is None  # the variant's, not perflab's


def test_the_probe_tells_a_set_up_that_starts_cuda_from_imports_that_did(tmp_path: Path) -> None:
    package = tmp_path / "site" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_LAZY_STAND_IN_TORCH)
    variant = Variant("gpu", env={"PYTHONPATH": str(tmp_path / "site")})
    benchmark = Benchmark("launch", stmt="x = 1", setup="import torch; torch.cuda.init()")
    experiment = Experiment(benchmarks=(benchmark,), variants=(variant,), settings=FAST)
    host = ProbeHost(SubprocessRunner(), sys.executable, cpu=None)
    probe = probe_benchmark(benchmark, experiment, host, speed=MachineSpeed())
    # the imports left the server fork-safe; the set-up, run in the probe's worker, did not
    assert probe.device_runtimes == ()
    assert probe.setup_device_runtimes == ("cuda",)
