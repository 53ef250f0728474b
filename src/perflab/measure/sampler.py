"""The interleaved sampling loop, written once for every lens that samples repeatedly.

A benchmark is measured in generations (fresh workers each), a generation in blocks, and each
block samples every variant once, in the order `perflab.plan.schedule.block_orders` draws from the
session's seeded rng, so the same seed gives the same schedule. The first blocks of a generation
warm up. A lens gives the sampler only how to measure one variant once (`MeasureOne`, called
with the sample's `Slot`) and how to run one generation; the sampler owns the counting, the
orders, the warm-up flags, the stopping rules and the progress updates. It reads the lens's
session only through `SamplingSession` (`perflab.measure.session.LensSession` is one), so a
session is a value the sampler is given, not a class a lens must extend.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from perflab.measure.lens import ProgressReporter
from perflab.plan.schedule import block_orders
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Sample, Variant
from perflab.records.settings import Settings


class SamplingSession(Protocol):
    """What the sampler reads of one benchmark's session, and no more: what it schedules, the
    seeded rng of its orders, the settings' warm-up, the clock and the lens's share of the
    budget for its stopping rules and stamps, the CPU turn around each block, where progress
    goes."""

    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def variants(self) -> Sequence[Variant]: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def rng(self) -> random.Random: ...
    @property
    def lens_budget_s(self) -> float: ...
    @property
    def progress(self) -> ProgressReporter: ...
    def elapsed_s(self) -> float: ...
    def since_start_ns(self) -> int: ...
    def turn(self) -> AbstractContextManager[None]: ...


# the session a sampler is given, as its lens holds it: the sampler's `session` keeps its type
SessionT = TypeVar("SessionT", bound=SamplingSession)


@dataclass(frozen=True)
class ProcessAccounting:
    """What the kernel accounted to the measured process over one sample: its CPU time, the
    time it waited to run, and how often it was preempted (None: not known)."""

    run_queue_ns: int | None = None
    cpu_ns: int | None = None
    involuntary_switches: int | None = None


@dataclass(frozen=True)
class Slot:
    """One sample's place in the schedule."""

    variant: int  # index into the experiment's variants
    generation: int
    block: int  # within its generation
    position: int  # within its block's order
    warmup: bool


# measure the slot's variant once (and store what it measured)
MeasureOne = Callable[[Slot], None]
# after this many blocks (or generations): whether that is enough
Enough = Callable[[int], bool]


def _always(done: int) -> bool:
    return True


class InterleavedSampler(Generic[SessionT]):
    """The schedule of one benchmark's samples for one lens: `blocks` within a generation,
    `generations` of them. `warmup_blocks` is how many blocks of each generation warm up (the
    settings' by default)."""

    def __init__(
        self, session: SessionT, metric: Metric, *, warmup_blocks: int | None = None
    ) -> None:
        self.session = session
        self.metric = metric
        self.warmup_blocks = (
            session.settings.warmup_blocks if warmup_blocks is None else warmup_blocks
        )

    def blocks(
        self,
        measure: MeasureOne,
        *,
        generation: int = 0,
        blocks: int | None = None,
        enough: Enough | None = None,
        before_block: Callable[[int], None] | None = None,
    ) -> int:
        """Sample blocks of one generation: `blocks` of them, or fewer where `enough` (asked
        after each block with the number done) says so; without either, until `enough`.
        `before_block` runs once the block's order is drawn, before its first sample. Returns
        the number of blocks sampled."""
        orders = block_orders(len(self.session.variants), self.session.rng)
        done = 0
        while blocks is None or done < blocks:
            order = next(orders)
            if before_block is not None:
                before_block(done)
            warmup = done < self.warmup_blocks
            with self.session.turn():
                for position, index in enumerate(order):
                    measure(Slot(index, generation, done, position, warmup))
            done += 1
            if enough is not None and enough(done):
                break
        return done

    def generations(
        self,
        generation: Callable[[int], None],
        *,
        at_least: int,
        at_most: int | None = None,
        enough: Enough = _always,
        fit_budget_after: int | None = None,
        label: str | None = None,
    ) -> int:
        """Run `generation(g)` for g = 0, 1, ...: `at_least` of them, then more until `enough`
        (asked after each with the number done) or `at_most`. With `fit_budget_after`, from that
        many on another generation starts only if one more, as long as the mean so far, fits the
        lens's share of the budget. With `label`, progress is reported before each generation.
        Returns the number of generations run."""
        done = 0
        while at_most is None or done < at_most:
            if fit_budget_after is not None and done >= fit_budget_after:
                if not self.another_generation_fits(done):
                    break
            if label is not None:
                self.progress(
                    f"{label}, generation {done + 1}/{at_least}", min(1.0, done / at_least)
                )
            generation(done)
            done += 1
            if done >= at_least and enough(done):
                break
        return done

    def another_generation_fits(self, done: int) -> bool:
        """Whether one more generation, as long as the mean of the `done` so far, fits the
        lens's share of the budget."""
        elapsed_s = self.session.elapsed_s()
        return elapsed_s + elapsed_s / done <= self.session.lens_budget_s

    def out_of_budget(self) -> bool:
        return self.session.elapsed_s() >= self.session.lens_budget_s

    def progress(self, detail: str, fraction: float | None = None) -> None:
        self.session.progress.update(
            benchmark=self.session.benchmark.name,
            metric=self.metric,
            detail=detail,
            fraction=fraction,
        )

    def sample(
        self,
        slot: Slot,
        name: str,
        value: float,
        *,
        loops: int = 1,
        cpu: int | None = None,
        accounting: ProcessAccounting = ProcessAccounting(),
    ) -> Sample:
        """The record of one measurement at `slot`, stamped with the session's clock."""
        session = self.session
        return Sample(
            benchmark=session.benchmark.name,
            variant=session.variants[slot.variant].name,
            metric=self.metric,
            name=name,
            value=value,
            loops=loops,
            generation=slot.generation,
            block=slot.block,
            position=slot.position,
            cpu=cpu,
            at_ns=session.since_start_ns(),
            warmup=slot.warmup,
            run_queue_ns=accounting.run_queue_ns,
            cpu_ns=accounting.cpu_ns,
            involuntary_switches=accounting.involuntary_switches,
        )
