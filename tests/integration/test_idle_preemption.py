"""On a CPU nobody else uses, short commands in several languages are not counted as preempted:
what shares their CPU is perflab's launcher and the program itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.commands import CommandLauncher, CommandRun
from perflab.measure.worker_client import StatementWorker
from perflab.records.model import Benchmark, Metric, Sample, Variant
from perflab.stats.preemption import is_preempted

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="no schedstat"),
]

SAMPLES = 20
QUIET_SHARE = 0.01  # a probe that lost more of its time to others found the CPU busy
C_LOOP = "int main(void) { volatile long s = 0; for (long i = 0; i < N; i++) s += i; return 0; }"


def _probe_lost_share(cpu: int, duration_s: float = 0.2) -> float:
    """How much of a busy loop pinned to `cpu` other processes took (this thread's run-queue
    wait over its wall time)."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        before = _queued_ns()
        start = time.perf_counter()
        while time.perf_counter() - start < duration_s:
            pass
        return (_queued_ns() - before) / ((time.perf_counter() - start) * 1e9)
    finally:
        os.sched_setaffinity(0, allowed)


def _queued_ns() -> int:
    with open("/proc/thread-self/schedstat") as stat:
        return int(stat.read().split()[1])


@pytest.fixture(scope="module")
def quiet_cpu() -> int:
    shares = {cpu: _probe_lost_share(cpu, 0.1) for cpu in sorted(os.sched_getaffinity(0))[:4]}
    return min(shares, key=lambda cpu: shares[cpu])


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("c_loop")
    (folder / "loop.c").write_text(C_LOOP)
    binary = folder / "loop"
    subprocess.run(
        [compiler, "-O1", "-DN=20000000L", "-o", str(binary), str(folder / "loop.c")], check=True
    )
    return binary


def _sample(run: CommandRun) -> Sample:
    return Sample("b", "A", Metric.TIME, "wall_ns", run.wall_ns, run_queue_ns=run.run_queue_ns,
                  cpu_ns=run.user_ns + run.sys_ns)  # fmt: skip


def _preempted_share(argv: tuple[str, ...], cpu: int) -> tuple[float, list[CommandRun]]:
    with CommandLauncher(SubprocessRunner(), cpu=cpu) as launcher:
        runs = [
            launcher.run(argv, env=dict(os.environ), cwd=None, timeout_s=30)
            for _ in range(SAMPLES + 2)
        ][2:]  # the first ones read the program from disk
    assert all(run.returncode == 0 and run.cpu == cpu for run in runs)
    return sum(is_preempted(_sample(run)) for run in runs) / len(runs), runs


@pytest.fixture
def programs(c_loop: Path) -> Iterator[dict[str, tuple[str, ...]]]:
    yield {
        "c": (str(c_loop),),
        "python": (sys.executable, "-S", "-c", "for i in range(20000): pass"),
        "sh": ("/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done"),
    }


@pytest.mark.parametrize("language", ["c", "python", "sh"])
def test_short_commands_on_a_quiet_cpu_are_not_preempted(
    language: str, programs: dict[str, tuple[str, ...]], quiet_cpu: int
) -> None:
    before = _probe_lost_share(quiet_cpu)
    share, runs = _preempted_share(programs[language], quiet_cpu)
    after = _probe_lost_share(quiet_cpu)
    if max(before, after) > QUIET_SHARE:
        pytest.skip(f"CPU {quiet_cpu} is busy: other processes took {max(before, after):.1%}")
    # the launcher shared the CPU with the command and its turns are known
    assert all(run.launcher_cpu_ns is not None and run.launcher_cpu_ns > 0 for run in runs)
    assert share < 0.1, [(r.wall_ns, r.queued_ns, r.launcher_cpu_ns) for r in runs]


SPINNER = """
import hashlib, threading, time
def _spin(data=b"x" * 1_000_000, until=time.monotonic() + 30):
    while time.monotonic() < until:
        hashlib.sha256(data).digest()  # without the GIL: it runs beside the statement
threading.Thread(target=_spin, daemon=True).start()
"""


def test_a_statement_s_own_threads_on_its_cpu_are_not_preemption(quiet_cpu: int) -> None:
    worker = StatementWorker(
        SubprocessRunner(),
        Benchmark("sum", stmt="sum(range(100))", setup=SPINNER),
        Variant("A"),
        interpreter=sys.executable,
        cpu=quiet_cpu,
        timeout_s=60,
    )
    before = _probe_lost_share(quiet_cpu)
    with worker:
        loops = worker.calibrate(10_000_000)
        measured = [worker.sample(loops) for _ in range(10)]
    after = _probe_lost_share(quiet_cpu)
    if max(before, after) > QUIET_SHARE:
        pytest.skip(f"CPU {quiet_cpu} is busy: other processes took {max(before, after):.1%}")
    # the spinner took about half the CPU; each sample waited for it, and none counts that
    samples = [
        Sample("b", "A", Metric.TIME, "wall_ns", s.wall_ns, run_queue_ns=s.run_queue_ns,
               cpu_ns=s.cpu_ns)
        for s in measured
    ]  # fmt: skip
    assert sorted(s.wall_ns / (s.cpu_ns or s.wall_ns) for s in measured)[5] > 1.3
    assert sum(is_preempted(s) for s in samples) <= 2, measured
