"""The statement worker's CPU (worker/statement_cpu.py), read in this process: where it runs,
the time other processes took out of a sample (as stats.preemption takes it out), and a timed
loop's CPU time and run-queue wait read right around it."""

from __future__ import annotations

import builtins
import importlib
import os
from typing import Any

import pytest

from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.preemption import lost_ns
from perflab.worker.statement_cpu import accounted, current_cpu, unpreempted_ns

SUBJECT = "perflab.worker.statement_cpu"


def test_the_cpu_it_runs_on_is_one_it_may_run_on() -> None:
    cpu = current_cpu()
    assert cpu is None or cpu in os.sched_getaffinity(0)


@pytest.mark.parametrize(
    ("wall_ns", "cpu_ns", "run_queue_ns"),
    [(1000, 900, None), (1000, 900, 0), (1000, 600, 300), (1000, 900, 300), (1000, None, 300)],
)
def test_the_time_other_processes_took_comes_off_as_the_analysis_takes_it(
    wall_ns: int, cpu_ns: int | None, run_queue_ns: int | None
) -> None:
    sample = Sample("b", "A", Metric.TIME, "wall_ns", float(wall_ns), cpu_ns=cpu_ns,
                    run_queue_ns=run_queue_ns)  # fmt: skip
    assert unpreempted_ns(wall_ns, cpu_ns, run_queue_ns) == wall_ns - lost_ns(sample)


def test_a_timed_loop_is_read_with_its_cpu_time_and_wait_around_it() -> None:
    def timed(loops: int, empty: bool) -> int:
        total = sum(range(loops))  # some work on this thread's CPU
        assert total >= 0 and not empty
        return 1_000_000

    wall_ns, cpu_ns, queued_ns = accounted(timed, 100_000)
    assert wall_ns == 1_000_000
    assert cpu_ns is None or cpu_ns > 0
    assert queued_ns is None or queued_ns >= 0


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="no schedstat")
def test_its_import_reads_no_run_queue_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """schedstat's length follows how long the process has run: read at a fork server's
    import, it left the heap its children inherit in one of two states, 1.6% apart in a
    PyWavelets benchmark (bench/results/asv_aa_2026-11-30.md)."""
    from perflab.worker import statement_cpu

    opened: list[str] = []
    real_open = builtins.open

    def spied(path: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spied)
    importlib.reload(statement_cpu)
    assert not [path for path in opened if "schedstat" in path]
    monkeypatch.undo()
    assert isinstance(statement_cpu.read_run_queue_ns(), int)  # found all the same
