"""How perflab runs jobs in parallel: every pool it uses is here, each for one kind of job.

- `run_on_cpus`: independent measurements side by side, one per CPU (valgrind's counting does
  not depend on the machine being quiet), in threads that mostly wait for their processes; what
  each returns is handed over in the calling thread, where the store's connection lives.
- `run_jobs`: analysis after measuring in forked worker processes. While perflab measures it
  keeps off the measuring CPU and runs nothing of its own next to a measurement; once a lens has
  stopped measuring, what is left (symbol tables, disassembly, llvm-mca) depends on files only,
  and `all_cpus()` widens perflab's CPU set for that stretch. Jobs are closures: the workers are
  forked, so they see the parent's memory without pickling it; only results travel back.
- `run_threads`: jobs that wait on a tool's process (perf script, c++filt), one thread each.
- `map_in_processes`: functions of picklable arguments in spawned processes, for a caller that
  may hold threads and open connections (publishing a site's runs).

CPUs another perflab run measures on (its per-CPU lock, `other_runs_cpus`) are never used.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from perflab.machine import cpu_lock
from perflab.machine.host import online_cpus
from perflab.machine.proc import ProcessRunner, SubprocessRunner

T = TypeVar("T")
J = TypeVar("J")
R = TypeVar("R")


def other_runs_cpus(cpus: Sequence[int]) -> list[int]:
    """Those of `cpus` another perflab run holds the advisory lock of (it may be measuring
    time there): no job of this run goes there."""
    return [cpu for cpu, pid in cpu_lock.held_cpus(cpus).items() if pid != os.getpid()]


def analysis_cpus() -> set[int]:
    """The online CPUs no other perflab run is measuring on (its per-CPU lock): analysis must
    not disturb another run's measurement either."""
    online = online_cpus()
    return set(online) - set(other_runs_cpus(online))


@contextmanager
def all_cpus(measuring_cpu: int | None = None) -> Iterator[None]:
    """Let this process (and what it starts) run on every online CPU that no other perflab run
    measures on, `measuring_cpu` included (the engine keeps perflab off it while it measures, so
    the current affinity lacks it); restored afterwards. Only for work after a measurement has
    stopped."""
    also = () if measuring_cpu is None else (measuring_cpu,)
    try:
        saved = os.sched_getaffinity(0)
        wanted = analysis_cpus() | saved | (set(also) - set(other_runs_cpus(also)))
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


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def map_in_processes(
    function: Callable[..., R], arguments: Sequence[tuple[Any, ...]], *, workers: int
) -> Iterator[R]:
    """`function(*args)` for each of `arguments`, in order, in up to `workers` spawned processes
    (`function` and its arguments pickled). Spawned, not forked: the caller may hold threads and
    open connections. Ends early, without an error, when a process could not start (a script
    without a `__main__` guard, no memory): the caller does what is left itself."""
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            yield from pool.map(function, *zip(*arguments, strict=True))
    except BrokenProcessPool:
        return


DRAIN_EVERY_S = 0.5  # how soon what a job handed over is stored while jobs run


def counting_cpus(
    allowed: Iterable[int], busy: Collection[int], measuring_cpu: int | None
) -> tuple[int | None, ...]:
    """The CPUs side-by-side jobs may be pinned to, one job per CPU at a time.

    `allowed`: the CPUs perflab may run on (its affinity, the measuring CPU included: the engine
    keeps perflab itself off that CPU, not its measurements). `busy`: CPUs another perflab run
    holds the lock of (it may be measuring time there), never used. When nothing is left the jobs
    run one after another on the measuring CPU (or unpinned, `None`)."""
    free = tuple(sorted(set(allowed) - set(busy)))
    if free:
        return free
    return (measuring_cpu if measuring_cpu not in busy else None,)


class Cancelled(Exception):
    """A job that was stopped because another one failed or the run was interrupted."""


class LiveSet(Generic[J]):
    """What the running jobs have started (workers), so that the calling thread can stop them
    all at once; a job registering after `stop` is stopped at once."""

    def __init__(self, stop_one: Callable[[J], None]) -> None:
        self._stop_one = stop_one
        self._lock = threading.Lock()
        self._live: list[J] = []
        self._stopped = False

    def add(self, item: J) -> None:
        with self._lock:
            if not self._stopped:
                self._live.append(item)
                return
        self._stop_one(item)
        raise Cancelled("stopped: another measurement failed or the run was interrupted")

    def discard(self, item: J) -> None:
        with self._lock:
            if item in self._live:
                self._live.remove(item)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            live, self._live = self._live, []
        for item in live:
            self._stop_one(item)


def run_on_cpus(
    jobs: Sequence[J],
    cpus: Sequence[int | None],
    work: Callable[[J, int | None], R],
    on_done: Callable[[J, R], None],
    *,
    on_stop: Callable[[], None] = lambda: None,
    drain: Callable[[], None] = lambda: None,
) -> None:
    """Run `work(job, cpu)` for every job, at most one job per CPU at a time, jobs started in
    their order; `on_done(job, result)` runs in the calling thread as each job finishes.

    With one CPU (or one job) everything runs in the calling thread, in order. Otherwise the
    first failure (or Ctrl-C) calls `on_stop` (which must make the running jobs end soon: kill
    their processes), cancels the jobs not yet started, waits for the running ones and is
    raised; later failures caused by the stop are dropped.

    `drain` runs in the calling thread too: every DRAIN_EVERY_S while jobs run, before each
    `on_done`, and once the jobs have ended after a failure. A job hands over what it finished
    part by part (a queue `drain` empties into the store), so that a failure or an interrupt
    midway loses none of it."""
    if len(cpus) <= 1 or len(jobs) <= 1:
        _run_in_order(jobs, cpus[0] if cpus else None, work, on_done, drain=drain)
    else:
        _run_in_threads(jobs, cpus, work, on_done, on_stop=on_stop, drain=drain)


def _run_in_order(
    jobs: Sequence[J],
    cpu: int | None,
    work: Callable[[J, int | None], R],
    on_done: Callable[[J, R], None],
    *,
    drain: Callable[[], None],
) -> None:
    """Every job in the calling thread, one after another on `cpu`."""
    try:
        for job in jobs:
            result = work(job, cpu)
            drain()
            on_done(job, result)
    except BaseException:
        with contextlib.suppress(Exception):  # the failure is what the caller must see
            drain()
        raise


def _run_in_threads(
    jobs: Sequence[J],
    cpus: Sequence[int | None],
    work: Callable[[J, int | None], R],
    on_done: Callable[[J, R], None],
    *,
    on_stop: Callable[[], None],
    drain: Callable[[], None],
) -> None:
    """Every job in a thread of its own, each holding one of `cpus` while it runs."""
    free: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for cpu in cpus:
        free.put(cpu)

    def pinned(job: J) -> R:
        cpu = free.get()  # never blocks for long: at most len(cpus) jobs run at once
        try:
            return work(job, cpu)
        finally:
            free.put(cpu)

    pool = ThreadPoolExecutor(
        max_workers=min(len(cpus), len(jobs)), thread_name_prefix="perflab-count"
    )
    futures: dict[Future[R], int] = {pool.submit(pinned, job): i for i, job in enumerate(jobs)}
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, timeout=DRAIN_EVERY_S, return_when=FIRST_COMPLETED)
            drain()
            for future in sorted(done, key=futures.__getitem__):
                on_done(jobs[futures[future]], future.result())
    except BaseException:
        on_stop()
        pool.shutdown(wait=True, cancel_futures=True)
        with contextlib.suppress(Exception):  # the failure is what the caller must see
            drain()
        raise
    pool.shutdown(wait=True)
