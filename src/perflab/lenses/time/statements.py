"""The time lens on statements: per generation one fresh worker per variant (or forked from a
round's fork servers), pinned to one CPU, started ahead while the previous generation measures,
with short calibrated samples alternating between the variants."""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from perflab.budget.costs import ServerRounds
from perflab.lenses.time.artifacts import KIND_SERVER_ROUND, WALL_NS
from perflab.lenses.time.bookkeeping import (
    LOADED_PREEMPTED_FRACTION,
    LOADED_SAMPLE_MS,
    TimeBookkeeping,
)
from perflab.lenses.time.cost import (
    TIME_GENERATION_S_RANGE,
    TIME_MIN_BLOCKS,
    TIME_TARGET_GENERATIONS,
)
from perflab.lenses.time.metric import TIME
from perflab.machine.host import online_cpus
from perflab.measure.fork_server import ForkServers
from perflab.measure.layout import (
    LAYOUT_PADDING_VARIABLE,
    draw_padding,
)
from perflab.measure.sampler import InterleavedSampler, ProcessAccounting, Slot
from perflab.measure.session import LensSession, loops_per_variant
from perflab.measure.worker_client import StatementWorker, WorkerLaunch
from perflab.plan.schedule import launch_order
from perflab.records.model import Artifact, Note, Sample, Severity
from perflab.records.run_facts import VariantInfo
from perflab.records.settings import Settings
from perflab.stats import preemption


class TimeStatementSession:
    """The time lens on a statement benchmark: generations of fresh (or forked) workers per
    variant, interleaved, until the stopping rule or the budget ends them. Its workers come
    from the bookkeeping's `LensSession`."""

    def __init__(self, book: TimeBookkeeping) -> None:
        self.book = book
        self.session = book.session
        self.sampler = InterleavedSampler(self.session, TIME)

    def run(self) -> None:
        if self.session.context.server_rounds is not None:
            self._run_in_rounds(self.session.context.server_rounds)
            return
        settings = self.session.settings
        loops: list[int] | None = None  # per variant
        shortest_s = self._planned_generation_s()
        generation_s = shortest_s
        generation = 0
        upcoming = self._next_launch()
        prestarted: Prestart | None = None
        try:
            while True:
                started_ns = self.session.clock_ns()
                launch, upcoming = upcoming, self._next_launch()
                workers = self._start(launch, prestarted)
                if prestarted is not None:
                    # sampling as long as these workers took to start keeps the next generation
                    # ready in time, and no longer: the first generation's start-up (which also
                    # compiled the variants' bytecode caches) is often longer
                    generation_s = max(shortest_s, prestarted.startup_s)
                    prestarted = None
                with self.session.closing(workers):
                    self._record_interpreters(workers)
                    startup_s = (self.session.clock_ns() - started_ns) / 1e9
                    if loops is None:
                        loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
                        # keep start-up below half of each generation's time
                        generation_s = max(generation_s, startup_s)
                    generation_s = self._fit_minimums(generation, generation_s, startup_s)
                    if self._another_generation_likely(generation, generation_s):
                        prestarted = Prestart(self.session, upcoming)
                    self._sample_generation(workers, generation, loops, generation_s)
                if generation == 0:
                    loops = self._shorter_if_preempted(loops)
                generation += 1
                minimums_met = generation >= settings.min_generations
                if self.book.stop_after(f"generation {generation}", minimums_met=minimums_met):
                    return
        finally:
            if prestarted is not None:
                prestarted.discard()

    def _planned_generation_s(self) -> float:
        """How long each generation samples, unless start-up or the minimums say otherwise."""
        low_s, high_s = TIME_GENERATION_S_RANGE
        return min(high_s, max(low_s, self.book.budget_s / TIME_TARGET_GENERATIONS))

    def _start(
        self, launch: GenerationLaunch, prestarted: Prestart | None
    ) -> list[StatementWorker]:
        """This generation's workers: those started ahead, moved onto the measuring CPU, or
        fresh ones."""
        if prestarted is None:
            return self.session.launch_workers(
                layout=launch.layout,
                disable_aslr=self.session.settings.paired_layout,
                rng=launch.rng,
            )
        workers = prestarted.take()
        self.session.pin_to_measuring_cpu(workers)
        return workers

    def _fit_minimums(self, generation: int, generation_s: float, startup_s: float) -> float:
        """Behind (workers start slower than the probe said), this and the minimum generations
        still to come sample less, down to their minimum blocks, rather than overrun."""
        if not 0 < generation < self.session.settings.min_generations:
            return generation_s
        return sampling_to_fit(
            generation_s,
            self.book.budget_s - self.session.elapsed_s(),
            self.session.settings.min_generations - generation,
            # started ahead, the next workers' start-up overlaps this sampling
            0.0 if self._started_ahead(generation) else startup_s,
        )

    def _next_launch(self) -> GenerationLaunch:
        """The next generation's layout and launch order, drawn here (in the measuring thread)
        whether it is started ahead or not, so a seeded schedule stays the same."""
        layout = generation_layout(self.session.rng) if self.session.settings.paired_layout else {}
        return GenerationLaunch(layout=layout, rng=random.Random(self.session.rng.getrandbits(64)))

    def _started_ahead(self, generation: int) -> bool:
        """Whether the next generation's workers start while this one measures."""
        return self._another_generation_likely(generation, 0.0)

    def _another_generation_likely(self, generation: int, generation_s: float) -> bool:
        """Start the next generation's workers while this one measures, on perflab's own CPUs
        (not the measuring one), when there are such CPUs and another generation will probably
        follow: worker start-up (interpreter, imports, setup) then costs no measuring time."""
        if self.session.context.cpu is None or self.session.context.fork_servers is not None:
            return False
        if not set(online_cpus()) - {self.session.context.cpu}:
            return False
        if generation + 1 < self.session.settings.min_generations:
            return True
        return self.session.elapsed_s() + generation_s < self.book.budget_s

    def _run_in_rounds(self, rounds: ServerRounds) -> None:
        """Generations forked from rounds of fork servers: each round starts one server per
        variant (a fresh process: its own hash seed, stack padding and physical pages, the
        set-up's imports paid once), forks `forks_per_round` generations' workers from them,
        and stops them. Every variant's server and workers of a round share one layout, as a
        fresh generation's workers do. The minimums are `min_rounds` whole rounds and
        `min_generations` generations; the budget may cut a round beyond them short."""
        session, settings = self.session, self.session.settings
        done = ServerRoundsDone(rounds, round_start_s=rounds.round_start_s)
        generation_s = self._planned_generation_s()
        while not (
            done.minimums_met(settings)
            and session.elapsed_s() + done.round_start_s >= self.book.budget_s
        ):
            layout = generation_layout(session.rng) if settings.paired_layout else {}
            started_ns = session.clock_ns()
            with self._round_servers(layout) as servers:
                done.round_start_s = (session.clock_ns() - started_ns) / 1e9
                self._sample_round(done, servers, layout, generation_s)
            done.completed += 1
            if done.minimums_met(settings) and self.book.precision_reached(
                self.book.interval_bases()
            ):
                break
        self._note_rounds(done.completed, done.generation)

    def _sample_round(
        self,
        done: ServerRoundsDone,
        servers: ForkServers,
        layout: dict[str, str],
        generation_s: float,
    ) -> None:
        """The generations forked in one round, each sampling as long as `_round_sampling_s`
        says; beyond the minimums the stopping rule may cut the round short."""
        pids = [servers.server(i).process.pid for i in range(len(self.session.variants))]
        for fork in range(done.rounds.forks_per_round):
            fork_started_ns = self.session.clock_ns()
            with self.session.generation(
                layout=layout, disable_aslr=self.session.settings.paired_layout
            ) as workers:
                self._record_round(done.generation, done.completed, pids)
                self._record_interpreters(workers)
                if done.loops is None:
                    target_ns = int(self.session.settings.sample_target_ms * 1e6)
                    done.loops = loops_per_variant(workers, target_ns)
                fork_s = (self.session.clock_ns() - fork_started_ns) / 1e9
                sampling_s = self._round_sampling_s(
                    done.rounds, generation_s, done.completed, fork, done.round_start_s, fork_s
                )
                self._sample_generation(workers, done.generation, done.loops, sampling_s)
            if done.generation == 0:
                done.loops = self._shorter_if_preempted(done.loops)
            done.generation += 1
            what = f"round {done.completed + 1}, generation {done.generation}"
            if self.book.stop_after(what, minimums_met=done.minimums_met(self.session.settings)):
                return  # a round beyond the minimums, cut short

    def _round_sampling_s(
        self,
        rounds: ServerRounds,
        planned_s: float,
        completed: int,
        fork: int,
        round_start_s: float,
        fork_s: float,
    ) -> float:
        """How long this generation samples: as planned, except while the minimum rounds are
        not done, when the generations still to come in them (and their rounds' start-ups)
        must fit in what is left of the share (each samples its minimum blocks at worst). A
        round is only complete with all its forks, so the minimum is whole rounds, and sampled
        at the planned length they can overrun the share."""
        if completed >= rounds.min_rounds:
            return planned_s
        rounds_after = rounds.min_rounds - completed - 1
        generations_left = (rounds.forks_per_round - fork) + rounds_after * rounds.forks_per_round
        left_s = self.book.budget_s - self.session.elapsed_s() - rounds_after * round_start_s
        return sampling_to_fit(planned_s, left_s, generations_left, fork_s)

    @contextlib.contextmanager
    def _round_servers(self, layout: dict[str, str]) -> Iterator[ForkServers]:
        """One round's fork servers, started in random order; killed at once when the round
        fails or is interrupted, closed after it."""
        servers = ForkServers(
            self.session.context.runner,
            self.session.benchmark,
            self.session.variants,
            WorkerLaunch(
                self.session.context.default_python,
                cpu=self.session.context.cpu,
                timeout_s=self.session.settings.sample_timeout_s,
                extra_env=layout,
                disable_aslr=self.session.settings.paired_layout,
            ),
        )
        try:
            servers.started(order=launch_order(len(self.session.variants), self.session.rng))
            self.session.round_servers = servers
            yield servers
        except BaseException:
            servers.kill()
            raise
        finally:
            self.session.round_servers = None
            servers.close()

    def _record_round(self, generation: int, round_index: int, pids: list[int]) -> None:
        self.book.units[generation] = round_index
        self.session.context.sink.add_artifact(
            Artifact(
                benchmark=self.session.benchmark.name,
                variant=self.session.variants[0].name,
                metric=TIME,
                kind=KIND_SERVER_ROUND,
                content=json.dumps({"round": round_index, "servers": pids}),
                generation=generation,
            )
        )

    def _note_rounds(self, rounds: int, generations: int) -> None:
        self.session.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"the set-up's imports are expensive: the time lens forked its "
                f"{generations} generations from {rounds} rounds of fork servers (one fresh "
                "process per variant and round, which imported them once); forked workers "
                "share their server's hash seed and memory, so the interval is over rounds",
                hint="a larger --budget buys more rounds; docs/statistics.md (expensive "
                "set-ups) has the design",
                benchmark=self.session.benchmark.name,
                metric=TIME,
            )
        )

    def _shorter_if_preempted(self, loops: list[int]) -> list[int]:
        """On a busy machine most samples of the calibrated length are preempted: from the
        second generation on, samples are shortened so most fit between two preemptions
        (docs/statistics.md, "A busy machine"). Each variant's loops are set so that its
        samples last about as long as every other's: a variant whose samples last longer is
        preempted more often, and preemption costs more than the time it takes out
        (docs/statistics.md, "Overload"). Pairs compare time per iteration, so different loop
        counts leave the ratio unbiased."""
        measured = [s for s in self.book.samples if not s.warmup and s.run_queue_ns is not None]
        factor = LOADED_SAMPLE_MS / self.session.settings.sample_target_ms
        if not measured or factor >= 1:
            return loops
        preempted = sum(preemption.is_preempted(s) for s in measured) / len(measured)
        if preempted < LOADED_PREEMPTED_FRACTION:
            return loops
        self.session.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"{preempted:.0%} of the first generation's samples were preempted by "
                f"other processes: samples were shortened to about {LOADED_SAMPLE_MS:g} ms "
                "from the second generation on, so that fewer are",
                benchmark=self.session.benchmark.name,
                metric=TIME,
            )
        )
        return equal_duration_loops(
            loops,
            [[s for s in measured if s.variant == v.name] for v in self.session.variants],
            factor,
        )

    def _record_interpreters(self, workers: list[StatementWorker]) -> None:
        for variant, worker in zip(self.session.variants, workers, strict=True):
            info = VariantInfo(
                python_version=worker.info.python_version,
                implementation=worker.info.implementation,
                executable=worker.info.executable,
                device_synchronised=worker.info.device_synchronised,
            )
            self.session.context.sink.add_variant_info(variant.name, info)

    def _sample_generation(
        self,
        workers: list[StatementWorker],
        generation: int,
        loops: list[int],
        generation_s: float,
    ) -> None:
        """Blocks of samples until the generation has sampled `generation_s` and its minimum
        blocks (time waited for turns on a shared CPU is not sampling: elapsed_s leaves it out)."""
        generation_start_s = self.session.elapsed_s()

        def measure(slot: Slot) -> None:
            measured = workers[slot.variant].sample(loops[slot.variant])
            self.book.record(
                self.sampler.sample(
                    slot,
                    WALL_NS,
                    measured.wall_ns,
                    loops=loops[slot.variant],
                    cpu=measured.cpu,
                    accounting=ProcessAccounting(
                        measured.run_queue_ns, measured.cpu_ns, measured.involuntary_switches
                    ),
                )
            )

        def enough(blocks: int) -> bool:
            spent_s = self.session.elapsed_s() - generation_start_s
            minimum = self.session.settings.warmup_blocks + TIME_MIN_BLOCKS
            return blocks >= minimum and spent_s >= generation_s

        self.sampler.blocks(measure, generation=generation, enough=enough)


@dataclass
class ServerRoundsDone:
    """How far the rounds of fork servers have come."""

    rounds: ServerRounds
    round_start_s: float  # how long the last round's servers took to start
    completed: int = 0  # rounds done: all their forks, or cut short after the minimums
    generation: int = 0  # generations done, over all rounds
    loops: list[int] | None = None  # per variant, calibrated in the first generation

    def minimums_met(self, settings: Settings) -> bool:
        return (
            self.completed >= self.rounds.min_rounds and self.generation >= settings.min_generations
        )


@dataclass(frozen=True)
class GenerationLaunch:
    """What one generation's workers start with, drawn from the session's seeded generator
    before they start (here or ahead, in another thread), so a seed gives the same schedule."""

    layout: dict[str, str]  # hash seed and padding every worker of it shares ({}: not paired)
    rng: random.Random  # draws the order the variants' workers start in


class Prestart:
    """The next generation's workers, started in a thread on perflab's own CPUs while the
    current generation measures; `take` waits for them, `discard` closes them unused."""

    def __init__(self, session: LensSession, launch: GenerationLaunch) -> None:
        self.startup_s = 0.0  # how long the workers took to start, once `take` returned

        def start_workers() -> list[StatementWorker]:
            # the real clock, not the session's: a test's fake clock advances as the sampler
            # reads it, which a second thread's readings would make depend on thread timing
            started_ns = time.monotonic_ns()
            workers = session.launch_workers(
                layout=launch.layout,
                disable_aslr=session.settings.paired_layout,
                rng=launch.rng,
                off_measuring_cpu=True,
            )
            self.startup_s = (time.monotonic_ns() - started_ns) / 1e9
            return workers

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perflab-prestart")
        self._future = pool.submit(start_workers)
        pool.shutdown(wait=False)

    def take(self) -> list[StatementWorker]:
        return self._future.result()

    def discard(self) -> None:
        try:
            workers = self._future.result()
        except BaseException:
            return  # it failed to start: nothing to stop (launch_workers killed what it started)
        for worker in workers:
            worker.kill()


def equal_duration_loops(
    loops: Sequence[int], samples: Sequence[Sequence[Sample]], factor: float
) -> list[int]:
    """Every variant's loops for samples `factor` times as long as the first variant's were,
    each from its own time per iteration (preempted time taken out), so all last alike.
    A variant without samples shrinks by `factor`."""
    times = [
        float(np.median([preemption.corrected(s).per_iteration for s in mine])) if mine else 0.0
        for mine in samples
    ]
    if not times or times[0] <= 0:
        return [max(1, round(n * factor)) for n in loops]
    target = loops[0] * factor * times[0]
    return [
        max(1, round(target / t)) if t > 0 else max(1, round(n * factor))
        for n, t in zip(loops, times, strict=True)
    ]


def sampling_to_fit(
    planned_s: float, left_s: float, generations_left: int, startup_s: float
) -> float:
    """How long each of the minimum generations still to come samples so that they fit in what
    is left of the lens's share (each also starts its workers, `startup_s`): as planned when
    they fit; 0 when not even their start-ups fit (each then samples its minimum blocks)."""
    if generations_left <= 0:
        return planned_s
    return max(0.0, min(planned_s, left_s / generations_left - startup_s))


def generation_layout(rng: random.Random) -> dict[str, str]:
    """Environment shared by all workers of one generation: a random hash seed and a random
    amount of environment padding, which (with ASLR off) fixes one random stack and hash layout
    for every variant alike."""
    return {
        "PYTHONHASHSEED": str(rng.randrange(1, 2**32 - 1)),
        LAYOUT_PADDING_VARIABLE: "x" * draw_padding(rng),
    }
