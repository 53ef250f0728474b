"""Real scheduler accounting: a statement worker and a command sharing their CPU with a busy
loop see the time it took from them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.commands import CommandLauncher
from perflab.measure.worker_client import StatementWorker, WorkerLaunch
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Sample, Variant
from perflab.stats.preemption import lost_share

pytestmark = pytest.mark.integration

CPU = max(os.sched_getaffinity(0))
BUSY = (
    f"import os, time; os.sched_setaffinity(0, {{{CPU}}}); d = time.monotonic() + 20\n"
    "while time.monotonic() < d: pass"
)


@pytest.fixture
def competitor() -> Iterator[None]:
    """A busy loop on the measuring CPU (it stops by itself after 20 s at the latest)."""
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        yield
    finally:
        busy.kill()
        busy.wait()


def _as_sample(wall_ns: int, cpu_ns: int | None, run_queue_ns: int | None) -> Sample:
    return Sample(
        "b", "A", Metric.TIME, "wall_ns", wall_ns, run_queue_ns=run_queue_ns, cpu_ns=cpu_ns
    )


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="no schedstat")
def test_a_worker_sharing_its_cpu_reports_the_time_taken_from_it(competitor: None) -> None:
    worker = StatementWorker.start(
        SubprocessRunner(),
        Benchmark("sum", stmt="sum(range(100))"),
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=CPU, timeout_s=30),
    )
    with worker:
        loops = worker.calibrate(20_000_000)
        measured = [worker.sample(loops) for _ in range(5)]
    for sample in measured:
        assert sample.cpu == CPU
        assert sample.cpu_ns is not None and 0 < sample.cpu_ns <= sample.wall_ns * 1.01
        assert sample.run_queue_ns is not None and sample.involuntary_switches is not None
    # the busy loop runs whenever the worker is not: most of its samples lost a large share
    shares = [lost_share(_as_sample(s.wall_ns, s.cpu_ns, s.run_queue_ns)) for s in measured]
    assert sum(share > 0.2 for share in shares) >= 3, shares
    # calibration leaves out the time taken by the busy loop: a sample is ~20 ms of CPU time
    cpu_ms = sorted(s.cpu_ns or 0 for s in measured)[2] / 1e6
    assert cpu_ms > 12, cpu_ms


def test_a_command_sharing_its_cpu_reports_the_time_taken_from_it(competitor: None) -> None:
    burn = "x = 0\nfor i in range(1_000_000): x += i"
    with CommandLauncher(SubprocessRunner(), cpu=CPU) as launcher:
        run = launcher.run((sys.executable, "-c", burn), env=dict(os.environ), cwd=None,
                           timeout_s=30)  # fmt: skip
    assert run.returncode == 0
    assert run.run_queue_ns is not None and run.involuntary_switches is not None
    sample = _as_sample(run.wall_ns, run.user_ns + run.sys_ns, run.run_queue_ns)
    assert lost_share(sample) > 0.2
