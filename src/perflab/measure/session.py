"""What a lens that samples repeatedly needs while measuring one benchmark."""

from __future__ import annotations

import contextlib
import random
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from perflab.measure.fork_server import ForkServers
from perflab.measure.layout import LAYOUT_PADDING_VARIABLE, equalise_padding
from perflab.measure.lens import LensContext, ProgressReporter
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerLaunch,
    WorkerOps,
    interpreter_for,
    variant_environment,
)
from perflab.plan.schedule import launch_order
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Note, Severity
from perflab.records.settings import Settings

# A variant whose own calibrated loop count is more than this factor away from the baseline's
# gets its own: on the baseline's count, a far slower variant's samples would last as many times
# longer, overrunning the budget and the sample timeout. Within the factor every variant keeps
# the baseline's count, so same-speed variants run identical loops.
OWN_LOOPS_FACTOR = 4.0


class Calibrates(Protocol):
    """A worker that can say how many loops take about `target_ns`."""

    def calibrate(self, target_ns: int) -> int: ...


def loops_per_variant(workers: Sequence[Calibrates], target_ns: int) -> list[int]:
    """The loop count of each variant's samples (the variants' order, baseline first): the
    baseline's calibration, or the variant's own where it differs by more than OWN_LOOPS_FACTOR.
    Samples keep their loop count; statistics use time per iteration."""
    baseline = workers[0].calibrate(target_ns)
    loops = [baseline]
    for worker in workers[1:]:
        own = worker.calibrate(target_ns)
        differs = max(own, baseline) > OWN_LOOPS_FACTOR * min(own, baseline)
        loops.append(own if differs else baseline)
    return loops


def benchmark_rng(settings: Settings, benchmark: Benchmark, lens: str = "") -> random.Random:
    """The seeded randomness of one benchmark's schedule (launch orders, ABBA starts, layouts);
    `lens` gives lenses other than the time lens schedules of their own."""
    if settings.seed is None:
        return random.Random()
    return random.Random(f"{settings.seed}:{benchmark.name}" + (f":{lens}" if lens else ""))


def _nothing() -> None:
    pass


@dataclass(frozen=True)
class WorkerWrap:
    """A program one worker runs under (e.g. `perf stat` or `perf record` with a control
    channel): the argv before the worker's, the descriptors it inherits, what to do right after
    the spawn whether it succeeded or not (close the parent's copies of perf's ends), and once
    the worker is closed or killed (close the channel)."""

    argv_prefix: tuple[str, ...]
    pass_fds: tuple[int, ...] = ()
    after_spawn: Callable[[], None] = _nothing
    release: Callable[[], None] = _nothing


# variant index -> how to wrap that variant's worker; called in launch order, just before it starts
WrapWorker = Callable[[int], WorkerWrap]


class LensSession:
    """Settings, variants, the benchmark's seeded schedule and a clock, for one benchmark, and
    the generations of workers started and cleaned up for it. `lens` names the schedule (see
    `benchmark_rng`); `metric` is the lens's, for its notes.

    A lens's session holds one and hands it to `InterleavedSampler`, which reads it as a
    `SamplingSession`. It is a value, not a base class: what a lens adds lives in the lens's own
    object beside it, so no method is defined here and overridden there."""

    def __init__(
        self,
        benchmark: Benchmark,
        context: LensContext,
        clock_ns: Callable[[], int] | None = None,
        *,
        lens: str = "",
        metric: Metric | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.metric = metric
        self.context = context
        self.settings = context.experiment.settings
        self.variants = context.experiment.variants
        # None: the run's (`LensContext.clock_ns`), so a run given a fake clock spends every
        # lens's share without waiting for it
        self.clock_ns = context.clock_ns if clock_ns is None else clock_ns
        self.start_ns = self.clock_ns()
        self._turn_waits_before_s = self._turn_waits_s()
        self.rng = benchmark_rng(self.settings, benchmark, lens)
        self._releases: list[Callable[[], None]] = []
        self._generations = 0
        # servers the lens started itself (the time lens's rounds): its workers are forked
        # from these rather than from the context's
        self.round_servers: ForkServers | None = None
        self._said_not_forked = False

    @property
    def fork_servers(self) -> ForkServers | None:
        """The servers this generation's workers are forked from, if any: none where a server
        initialised a GPU runtime (fresh workers then, said once in a note)."""
        servers = self.round_servers or self.context.fork_servers
        if servers is None:
            return None
        unsafe = servers.fork_unsafe()
        if unsafe:
            self._say_not_forked(unsafe)
            return None
        return servers

    def _say_not_forked(self, unsafe: Mapping[str, tuple[str, ...]]) -> None:
        if self._said_not_forked:
            return
        self._said_not_forked = True
        runtimes = ", ".join(sorted({r for names in unsafe.values() for r in names}))
        self.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"{runtimes} was initialised in the fork server of "
                f"{', '.join(sorted(unsafe))} before it forked, and does not survive fork: "
                "a fresh worker was started for each generation instead of a forked one",
                hint="fresh workers import the set-up's modules each time: give the lens more "
                "--budget for more generations",
                benchmark=self.benchmark.name,
                metric=self.metric,
            )
        )

    def elapsed_s(self) -> float:
        """Time spent so far, less the time waited for turns on a shared CPU: the budget is
        for measuring, and another run's turns measure nothing of this one."""
        waited_s = self._turn_waits_s() - self._turn_waits_before_s
        return float(self.clock_ns() - self.start_ns) / 1e9 - waited_s

    def since_start_ns(self) -> int:
        """The session's clock, from its start (a sample's `at_ns`)."""
        return self.clock_ns() - self.start_ns

    @property
    def lens_budget_s(self) -> float:
        """The lens's share of the benchmark's budget (`LensContext.lens_budget_s`)."""
        return self.context.lens_budget_s

    @property
    def progress(self) -> ProgressReporter:
        return self.context.progress

    def _turn_waits_s(self) -> float:
        turns = self.context.turns
        return 0.0 if turns is None else turns.waited_s

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """One sample block's turn on the measuring CPU (machine/cpu_lock.py, CpuTurns)."""
        turns = self.context.turns
        if turns is None or turns.held:
            yield
            return
        turns.take()
        try:
            yield
        finally:
            turns.give()

    def _forked(
        self, index: int, layout: Mapping[str, str], ops: Sequence[WorkerOps]
    ) -> StatementWorker:
        """A child of the variant's fork server (the lens's, for this benchmark: the hash seed
        and address-space layout are the server's for every child)."""
        servers = self.fork_servers
        assert servers is not None
        variant = self.variants[index]
        own_layout = {k: v for k, v in layout.items() if k not in variant.env}
        # every variant's child of one generation moves its heap and stack alike
        padding = zlib.crc32(repr(sorted(layout.items())).encode()) if layout else 0
        padding = (padding + 7919 * self._generations) % 4096
        return servers.server(index).worker(env=own_layout, padding=padding, ops=tuple(ops))

    def launch_workers(
        self,
        *,
        layout: Mapping[str, str] | None = None,
        disable_aslr: bool = False,
        ops: Sequence[WorkerOps] = (),
        wrap: WrapWorker | None = None,
        rng: random.Random | None = None,
        off_measuring_cpu: bool = False,
    ) -> list[StatementWorker]:
        """One fresh worker per variant (in the variants' order), started in random order so
        start-up order cannot favour a variant; if one fails to start, all are killed.
        `layout` is environment every worker shares, unless its variant sets the variable;
        `wrap` starts each worker under another program (its `release` runs in `release`).
        `rng` draws the launch order instead of the session's (for a launch in another thread);
        `off_measuring_cpu` starts the workers on perflab's own CPUs: `pin_to_measuring_cpu`
        moves them before they measure."""
        started: dict[int, StatementWorker] = {}
        fork = self.fork_servers is not None and wrap is None
        cpu = None if off_measuring_cpu else self.context.cpu
        extras = self._extra_environments(layout or {})
        try:
            for index in launch_order(len(self.variants), rng or self.rng):
                if fork:
                    started[index] = self._forked(index, layout or {}, ops)
                else:
                    started[index] = self._started(
                        index, wrap, cpu=cpu, env=extras[index], disable_aslr=disable_aslr, ops=ops
                    )
        except BaseException:
            for worker in started.values():
                worker.kill()
            self.release()
            raise
        self._generations += 1
        return [started[i] for i in range(len(self.variants))]

    def _started(
        self,
        index: int,
        wrap: WrapWorker | None,
        *,
        cpu: int | None,
        env: Mapping[str, str],
        disable_aslr: bool,
        ops: Sequence[WorkerOps],
    ) -> StatementWorker:
        """A fresh worker of the variant, under its wrap (released with the session's)."""
        variant = self.variants[index]
        wrapped = wrap(index) if wrap is not None else WorkerWrap(())
        self._releases.append(wrapped.release)
        try:
            return StatementWorker.start(
                self.context.runner,
                self.benchmark,
                variant,
                WorkerLaunch(
                    interpreter_for(variant, self.context.default_python),
                    cpu=cpu,
                    timeout_s=self.settings.sample_timeout_s,
                    prefix=wrapped.argv_prefix,
                    extra_env=env,
                    pass_fds=wrapped.pass_fds,
                    disable_aslr=disable_aslr,
                ),
                ops=ops,
            )
        finally:
            wrapped.after_spawn()

    def _extra_environments(self, layout: Mapping[str, str]) -> list[dict[str, str]]:
        """Each variant's share of the generation's layout (what it does not set itself), with
        the environment padding equalised across variants (perflab.measure.layout)."""
        extras = [
            {k: v for k, v in layout.items() if k not in variant.env} for variant in self.variants
        ]
        if LAYOUT_PADDING_VARIABLE not in layout:
            return extras
        return equalise_padding(
            extras,
            [variant_environment(variant) for variant in self.variants],
            [(interpreter_for(variant, self.context.default_python),) for variant in self.variants],
        )

    def pin_to_measuring_cpu(self, workers: Sequence[StatementWorker]) -> None:
        """Move workers started off the measuring CPU onto it, every thread of each."""
        if self.context.cpu is None:
            return
        for worker in workers:
            worker.pin(self.context.cpu)

    def release(self) -> None:
        """Run the `release` of every wrap since the last call (the workers are gone)."""
        releases, self._releases = self._releases, []
        for release in releases:
            release()

    @contextlib.contextmanager
    def generation(
        self,
        *,
        layout: Mapping[str, str] | None = None,
        disable_aslr: bool = False,
        ops: Sequence[WorkerOps] = (),
        wrap: WrapWorker | None = None,
    ) -> Iterator[list[StatementWorker]]:
        """A generation of workers: closed at the end, killed at once (mid-sample or not) when
        the block fails or is interrupted; then their wraps are released (a wrapping tool has
        written its output once its worker is closed)."""
        workers = self.launch_workers(layout=layout, disable_aslr=disable_aslr, ops=ops, wrap=wrap)
        with self.closing(workers):
            yield workers

    @contextlib.contextmanager
    def closing(self, workers: Sequence[StatementWorker]) -> Iterator[Sequence[StatementWorker]]:
        """Workers already started (see `generation`): closed at the end, abandoned when the
        block fails (see `StatementWorker.abandon`: killed at once when interrupted)."""
        try:
            yield workers
        except BaseException as error:
            for worker in workers:
                worker.abandon(error)
            raise
        finally:
            try:
                for worker in workers:
                    worker.close()
            finally:
                self.release()
