"""The interleaved sampler: its schedule, warm-up flags, stopping rules and progress."""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Iterator
from typing import Any

from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import LensContext, MemorySink
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession
from perflab.plan.schedule import block_orders
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.clocks import SetClock
from tests.support.fast_settings import FAST

BENCH = Benchmark(name="b", stmt="f()")


class Progress:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def update(self, **update: Any) -> None:
        self.updates.append(update)


def _sampler(
    n_variants: int = 3, *, budget_s: float = 1.0, warmup_blocks: int = 1
) -> tuple[InterleavedSampler[LensSession], SetClock, Progress]:
    variants = tuple(Variant(f"V{i}") for i in range(n_variants))
    settings = dataclasses.replace(FAST, budget_s=budget_s, warmup_blocks=warmup_blocks, seed=7)
    progress = Progress()
    context = LensContext(
        experiment=Experiment(benchmarks=(BENCH,), variants=variants, settings=settings),
        runner=FakeRunner(),
        sink=MemorySink(),
        progress=progress,
        cpu=None,
        default_python="/usr/bin/python3",
    )
    clock = SetClock()
    session = LensSession(BENCH, context, clock, schedule="test")
    return InterleavedSampler(session, Metric.TIME), clock, progress


def test_blocks_follow_block_orders_from_the_sessions_rng() -> None:
    for n_variants in (2, 3):
        sampler, _, _ = _sampler(n_variants)
        expected_rng = random.Random()
        expected_rng.setstate(sampler.session.rng.getstate())
        slots: list[Slot] = []
        assert sampler.blocks(slots.append, generation=4, blocks=5) == 5
        orders = block_orders(n_variants, expected_rng)
        expected = [
            Slot(index, 4, block, position, block < 1)
            for block in range(5)
            for position, index in enumerate(next(orders))
        ]
        assert slots == expected


def test_blocks_stop_when_enough_and_run_before_block_after_the_order_is_drawn() -> None:
    sampler, _, _ = _sampler(3, warmup_blocks=2)
    seen: list[str] = []
    state_at_block: list[object] = []

    def before(block: int) -> None:
        seen.append(f"block {block}")
        state_at_block.append(sampler.session.rng.getstate())

    def measure(slot: Slot) -> None:
        seen.append(f"{slot.block}:{slot.variant}:{'w' if slot.warmup else 'm'}")

    done = sampler.blocks(measure, before_block=before, enough=lambda blocks: blocks >= 3)
    assert done == 3
    assert seen[0] == "block 0" and seen[4] == "block 1" and seen[8] == "block 2"
    assert [s[-1] for s in seen if ":" in s] == ["w"] * 6 + ["m"] * 3
    # three variants draw a fresh order each block: the hook sees the rng after that draw
    assert state_at_block[0] != state_at_block[1]


def test_generations_run_at_least_then_until_enough_or_at_most() -> None:
    sampler, _, progress = _sampler()
    ran: list[int] = []
    assert sampler.generations(ran.append, at_least=2, at_most=2, label="x") == 2
    assert ran == [0, 1]
    assert [u["detail"] for u in progress.updates] == ["x, generation 1/2", "x, generation 2/2"]
    assert [u["fraction"] for u in progress.updates] == [0.0, 0.5]

    ran.clear()
    assert sampler.generations(ran.append, at_least=2, enough=lambda done: done >= 5) == 5
    ran.clear()
    assert sampler.generations(ran.append, at_least=3, at_most=10, enough=lambda done: False) == 10


def test_another_generation_starts_only_if_one_as_long_as_the_mean_fits_the_share() -> None:
    sampler, clock, _ = _sampler(budget_s=1.0)

    def generation(number: int) -> None:
        clock.now_ns += 300_000_000  # 0.3 s each

    # after 2: 0.6 s + 0.3 s fits 1 s; after 3: 0.9 s + 0.3 s does not
    assert sampler.generations(generation, at_least=6, at_most=6, fit_budget_after=2) == 3


def test_a_sample_carries_its_slot_and_the_sessions_clock() -> None:
    sampler, clock, _ = _sampler()
    clock.now_ns += 5
    sample = sampler.sample(Slot(2, 1, 3, 0, True), "wall_ns", 10.0, loops=4, cpu=1)
    assert (sample.variant, sample.generation, sample.block, sample.position) == ("V2", 1, 3, 0)
    assert sample.warmup and sample.loops == 4 and sample.at_ns == 5
    assert sample.metric is Metric.TIME and sample.benchmark == "b"


class BareSession:
    """A session with only what `SamplingSession` asks for: no context, no workers."""

    def __init__(self) -> None:
        self.benchmark = BENCH
        self.variants = (Variant("A"), Variant("B"))
        self.settings = dataclasses.replace(FAST, warmup_blocks=1)
        self.rng = random.Random(3)
        self.lens_budget_s = 1.0
        self.progress = Progress()
        self.turns = 0
        self.now_ns = 0

    def elapsed_s(self) -> float:
        return self.now_ns / 1e9

    def since_start_ns(self) -> int:
        return self.now_ns

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        self.turns += 1
        yield


def test_a_sampler_needs_only_a_sampling_session() -> None:
    session = BareSession()
    sampler = InterleavedSampler(session, Metric.TIME)
    slots: list[Slot] = []
    assert sampler.blocks(slots.append, blocks=2) == 2
    assert session.turns == 2 and [s.warmup for s in slots] == [True, True, False, False]
    session.now_ns = 7
    assert sampler.sample(slots[0], "wall_ns", 1.0).at_ns == 7
    session.now_ns = 10**9
    assert sampler.out_of_budget()
