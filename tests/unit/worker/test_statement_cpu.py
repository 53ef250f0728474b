"""The statement worker's CPU (worker/statement_cpu.py), read in this process: where it runs,
the time other processes took out of a sample (as stats.preemption takes it out), and a timed
loop's CPU time and run-queue wait read right around it."""

from __future__ import annotations

import os

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
