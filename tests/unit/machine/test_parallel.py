"""Jobs in parallel: which CPUs side-by-side jobs may use, one job per CPU at a time, results
handed over in the calling thread, the first failure stopping the others."""

from __future__ import annotations

import os
import queue
import threading
import time

import pytest

from perflab.machine.parallel import Cancelled, LiveSet, all_cpus, counting_cpus, run_on_cpus


def test_every_allowed_cpu_counts_except_those_another_run_measures_on() -> None:
    assert counting_cpus({0, 1, 2, 3}, frozenset(), 3) == (0, 1, 2, 3)
    assert counting_cpus({0, 1, 2, 3}, {3}, 3) == (0, 1, 2)
    # nothing free: one at a time, never on the busy CPU
    assert counting_cpus({1}, {1}, 1) == (None,)
    assert counting_cpus(set(), frozenset(), 1) == (1,)


def test_jobs_never_share_a_cpu_and_run_side_by_side() -> None:
    lock = threading.Lock()
    running: dict[int | None, str] = {}
    most_at_once = 0
    done: list[tuple[str, str]] = []
    main = threading.get_ident()
    # the first two jobs (started first, one per CPU) each wait for the other: side by side
    # by construction, not by a sleep long enough to overlap
    both_started = threading.Barrier(2, timeout=10)

    def work(job: str, cpu: int | None) -> str:
        nonlocal most_at_once
        with lock:
            assert cpu not in running, f"{job} on CPU {cpu}, taken by {running.get(cpu)}"
            running[cpu] = job
            most_at_once = max(most_at_once, len(running))
        if job in ("a", "b"):
            both_started.wait()
        with lock:
            del running[cpu]
        return f"{job}@{cpu}"

    def on_done(job: str, result: str) -> None:
        assert threading.get_ident() == main  # the store's connection lives in this thread
        done.append((job, result))

    run_on_cpus(["a", "b", "c", "d", "e"], (0, 1), work, on_done)
    assert sorted(job for job, _ in done) == ["a", "b", "c", "d", "e"]
    assert all(result.startswith(job + "@") for job, result in done)
    assert most_at_once == 2


def test_one_cpu_runs_everything_in_order_in_the_calling_thread() -> None:
    seen: list[tuple[str, int | None, int]] = []

    def work(job: str, cpu: int | None) -> int:
        seen.append((job, cpu, threading.get_ident()))
        return len(job)

    results: list[int] = []
    run_on_cpus(["x", "yy"], (1,), work, lambda _, r: results.append(r))
    assert [(j, c) for j, c, _ in seen] == [("x", 1), ("yy", 1)]
    assert {t for _, _, t in seen} == {threading.get_ident()}
    assert results == [1, 2]


def test_the_first_failure_stops_the_others_and_is_raised() -> None:
    stopped = threading.Event()

    def work(job: str, cpu: int | None) -> str:
        if job == "bad":
            raise ValueError("bad job")
        # a long measurement, cut short by on_stop (as killing its worker does)
        stopped.wait(timeout=10)
        raise RuntimeError("killed")

    started = time.monotonic()
    with pytest.raises(ValueError, match="bad job"):
        run_on_cpus(["slow", "bad", "never"], (0, 1), work, lambda *_: None, on_stop=stopped.set)
    assert stopped.is_set()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("cpus", [(0, 1), (0,)], ids=["side by side", "one CPU"])
def test_what_a_job_handed_over_before_a_failure_is_drained(cpus: tuple[int, ...]) -> None:
    """A job that counts several processes hands each over as it is counted: when a later one
    fails (or the run is interrupted), the ones before are still stored, in the calling
    thread."""
    handed: queue.SimpleQueue[str] = queue.SimpleQueue()
    stored: list[tuple[str, str]] = []

    def work(job: str, cpu: int | None) -> None:
        handed.put(f"{job}: first process")
        raise ValueError(f"{job}: the second process failed")

    def drain() -> None:
        while not handed.empty():
            stored.append((handed.get(), threading.current_thread().name))

    with pytest.raises(ValueError, match="second process failed"):
        run_on_cpus(["a", "b"], cpus, work, lambda *_: None, drain=drain)
    assert "a: first process" in [what for what, _ in stored]
    assert {thread for _, thread in stored} == {threading.current_thread().name}


def test_a_worker_registered_after_the_stop_is_stopped_at_once() -> None:
    killed: list[str] = []
    live: LiveSet[str] = LiveSet(killed.append)
    live.add("w1")
    live.stop()
    assert killed == ["w1"]
    with pytest.raises(Cancelled):
        live.add("w2")
    assert killed == ["w1", "w2"]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@pytest.mark.usefixtures("private_cpu_locks")  # another worker's runs hold CPUs too
def test_analysis_after_measuring_gets_the_measuring_cpu_back() -> None:
    """While measuring, the engine keeps perflab off the measuring CPU (its affinity lacks it);
    the analysis that follows widens to it again, and the narrowing comes back afterwards."""
    saved = os.sched_getaffinity(0)
    measuring = max(saved)
    try:
        os.sched_setaffinity(0, saved - {measuring})
        with all_cpus(measuring):
            assert measuring in os.sched_getaffinity(0)
        assert os.sched_getaffinity(0) == saved - {measuring}
    finally:
        os.sched_setaffinity(0, saved)
