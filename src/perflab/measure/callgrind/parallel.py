"""Independent measurements at once, one per CPU.

Instruction counts under valgrind do not depend on the machine being quiet, so the variants'
valgrind processes can run side by side, each pinned to a CPU of its own. The engine runs the
lenses one after another, so while such a lens runs every CPU perflab may use is free, except
those another perflab run measures on.

The jobs run in threads (they mostly wait for their processes); what they return is handed to
`on_done` in the calling thread, since the store's connection belongs to that thread.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Generic, TypeVar

J = TypeVar("J")
R = TypeVar("R")

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
