"""Analysis after measuring, on every CPU.

While perflab measures, it keeps itself off the measuring CPU (`engine`) and nothing of its own
runs next to a measurement. Once a lens has stopped measuring (perf has written its data),
what is left — reading symbol tables, disassembling, symbolising, llvm-mca — depends on files
only, and may use every CPU: `all_cpus()` widens perflab's CPU set for that stretch (the tools
it starts inherit it; CPUs another perflab run is measuring on, by its per-CPU lock, are left
alone) and `run_jobs` runs independent jobs in forked worker processes.

Jobs are closures: the workers are forked, so they see the parent's memory (objects already
read) without pickling it; only their results travel back, pickled, in the jobs' order.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from perflab.machine import cpu_lock
from perflab.machine.host import online_cpus
from perflab.machine.proc import ProcessRunner, SubprocessRunner

T = TypeVar("T")


def analysis_cpus() -> set[int]:
    """The online CPUs no other perflab run is measuring on (its per-CPU lock): analysis must
    not disturb another run's measurement either."""
    online = online_cpus()
    others = {cpu for cpu, pid in cpu_lock.held_cpus(online).items() if pid != os.getpid()}
    return set(online) - others


@contextmanager
def all_cpus() -> Iterator[None]:
    """Let this process (and what it starts) run on every online CPU that no other perflab run
    measures on; restored afterwards. Only for work after a measurement has stopped."""
    try:
        saved = os.sched_getaffinity(0)
        wanted = analysis_cpus() | saved
    except OSError:
        yield
        return
    widened = False
    if wanted != saved:
        try:
            os.sched_setaffinity(0, wanted)
            widened = True
        except OSError:
            pass  # a container may forbid it: the analysis is then slower, not wrong
    try:
        yield
    finally:
        if widened:
            os.sched_setaffinity(0, saved)


def analysis_workers() -> int:
    """How many processes analysis may use: the CPUs `all_cpus` gives it."""
    try:
        return max(1, len(analysis_cpus()))
    except OSError:
        return 1


_JOBS: Sequence[Callable[[], Any]] = ()


def _run(index: int) -> Any:
    return _JOBS[index]()


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent handles it and stops the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_jobs(jobs: Sequence[Callable[[], T]], *, workers: int) -> list[T]:
    """Each job's result, in order: in `workers` forked processes when there is more than one
    job and worker, else here, one after the other. A job's exception is raised here."""
    global _JOBS
    if workers <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    _JOBS = jobs
    try:
        context = multiprocessing.get_context("fork")
        with context.Pool(min(workers, len(jobs)), initializer=_worker_start) as pool:
            # the pool's exit terminates its workers, also when interrupted
            return pool.map(_run, range(len(jobs)), chunksize=1)
    finally:
        _JOBS = ()


def runs_real_processes(runner: ProcessRunner) -> bool:
    """Parallel analysis is for real processes: a fake runner's scripted replies and its record
    of what was asked assume one caller at a time."""
    return isinstance(runner, SubprocessRunner)


def run_threads(jobs: Sequence[Callable[[], T]], *, parallel: bool) -> list[T]:
    """Each job's result, in order, in one thread per job when `parallel`: for jobs that wait
    on a tool's process (perf script), where threads suffice."""
    if not parallel or len(jobs) <= 1:
        return [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [future.result() for future in futures]
