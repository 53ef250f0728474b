"""The time lens: wall time in a paired, interleaved design across worker generations.

Statements: per generation, one fresh worker per variant, all pinned to the same CPU; short
calibrated samples alternate between the variants (ABBA for two). When the set-up's imports are
expensive (`import torch`), the plan says so (`LensContext.server_rounds`): then each *round*
starts one fork server per variant, which imports them once, and forks a few generations'
workers from it; the interval is over rounds. Commands: every sample is one run of the command,
alternated the same way. See docs/statistics.md for why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import shlex
import shutil
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from perflab.lenses.time.analyse import (
    KIND_COMMAND_UNITS,
    KIND_EXIT_CODES,
    KIND_SERVER_ROUND,
    KIND_SHARED_CPU,
    WALL_NS,
    Decision,
    analyse_time,
    decide,
)
from perflab.lenses.time.cost import (
    TIME_GENERATION_S_RANGE,
    TIME_MIN_BLOCKS,
    TIME_TARGET_GENERATIONS,
)
from perflab.machine import cpu_lock
from perflab.machine.host import online_cpus
from perflab.machine.proc import ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.commands import CommandLauncher, CommandRun, command_argv
from perflab.measure.fork_server import ForkServers
from perflab.measure.layout import (
    LAYOUT_PADDING_VARIABLE,
    draw_padding,
    layout_info,
    padded_environments,
)
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.reported_time import ReportFiles
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, loops_per_variant
from perflab.measure.worker_client import StatementWorker, variant_environment
from perflab.plan.budget import ServerRounds
from perflab.plan.schedule import launch_order
from perflab.records.errors import BenchmarkFailedError, VariantsFailed
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    BenchmarkKind,
    Experiment,
    Metric,
    Note,
    Sample,
    Settings,
    Severity,
    Variant,
)
from perflab.stats import preemption
from perflab.stats.family import family_confidence, run_family_size
from perflab.stats.paired import RatioEstimate, estimate_ratio, own_log_values
from perflab.stats.sequential import MIN_UNITS_TO_STOP_EARLY, decided_agree, may_stop_early

MIN_BLOCKS_PER_GENERATION = TIME_MIN_BLOCKS  # after warm-up
# Per-process effects dominate the error on a noisy VM (docs/statistics.md), so the budget buys
# generations rather than long ones: about this many, each between these lengths ...
TARGET_GENERATIONS = TIME_TARGET_GENERATIONS
GENERATION_S_RANGE = TIME_GENERATION_S_RANGE
# ... but worker start-up (imports) may take at most half of a generation.
# a stop this much short of the share is said (a note), so that a plan is read against it
EARLY_STOP_SAID = 0.9
MIN_GROUPS_TO_STOP_EARLY = MIN_UNITS_TO_STOP_EARLY  # units before an early stop (stats.sequential)
STOP_CHECK_INTERVAL_S = 0.25  # commands: how often the stopping rule is evaluated
OVERRUN_FACTOR = 1.5  # measuring longer than this times the budget is worth a note
# Commands: the interval's unit is a batch of consecutive blocks lasting about this long (the
# pair ratios of blocks closer in time were correlated under load: docs/statistics.md), or a
# tenth of what the lens's share leaves after the warm-up when that is shorter; its size is
# fixed once, so the units form the sequence the stopping rule needs.
COMMAND_UNIT_S = 1.0
COMMAND_UNITS_IN_SHARE = 10
# Busy machine: when this share of the first generation's samples was preempted, the later
# generations' samples last about this long: a shorter sample fits between other processes'
# time slices, so far fewer are preempted and more pairs narrow the interval, even beside a
# single busy loop (docs/statistics.md; figures in bench/results/comment_figures.md).
LOADED_PREEMPTED_FRACTION = 0.05
LOADED_SAMPLE_MS = 2.0


class TimeLens:
    metric = Metric.TIME

    def __init__(self, clock_ns: Any = time.monotonic_ns) -> None:
        self._clock_ns = clock_ns

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        session: _StatementSession | _CommandSession
        if benchmark.kind is BenchmarkKind.STATEMENT:
            session = _StatementSession(benchmark, context, self._clock_ns)
        else:
            session = _CommandSession(benchmark, context, self._clock_ns)
        session.other_runs_on_cpu()
        session.run()
        session.note_overrun()
        session.note_early_stop()
        if session.failed:
            raise VariantsFailed(list(session.failed.values()))

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_time(
            benchmark,
            variants,
            data,
            experiment.settings,
            family=run_family_size(experiment),
            order=[v.name for v in experiment.variants],
        )


# --------------------------------------------------------------------------------------------
# measuring


class _Session(LensSession):
    """Shared bookkeeping: the budget, the samples so far, progress, when to stop."""

    metric = Metric.TIME

    def __init__(self, benchmark: Benchmark, context: LensContext, clock_ns: Any) -> None:
        super().__init__(benchmark, context, clock_ns)
        self.samples: list[Sample] = []
        self.budget_s = max(1e-3, context.lens_budget_s)  # its share of the benchmark's budget
        self.units: dict[int, int] = {}  # generation -> server round, when forked in rounds
        self.shared_cpu_with: tuple[int, ...] = ()  # other perflab runs on the measuring CPU
        self.started_wall_s = time.time()  # the lock's marks carry wall-clock times
        self.was_precise = False  # the stopping rule found every comparison precise enough
        self.sampler = InterleavedSampler(self, Metric.TIME)
        # variants that failed while the others were measured on (by index), with why
        self.failed: dict[int, BenchmarkFailedError] = {}

    def record(self, sample: Sample) -> None:
        self.samples.append(sample)
        self.context.sink.add_sample(sample)

    def decisions(self, batch_blocks: int | None = None) -> list[Decision]:
        """Every comparison as the analysis will decide it (`analyse.decide`), from the samples
        so far; with one variant, its own time, by the same precision."""
        baseline = [s for s in self.samples if s.variant == self.variants[0].name]
        policy = preemption.Preemption(self.settings.preempted)
        units = self.units or None
        if len(self.variants) == 1:
            own = own_log_values(baseline, batch_blocks=batch_blocks, preemption=policy)
            estimate = estimate_ratio(own, self.settings.confidence, units=units)
            return [Decision(pairs=own, mean=estimate, estimate=estimate, check=None)]
        confidence = family_confidence(
            self.settings.confidence, run_family_size(self.context.experiment)
        )
        shared_cpu_with = self.other_runs_on_cpu()
        decisions = []
        for index, variant in enumerate(self.variants[1:], 1):
            if index in self.failed:  # compared with nothing: no reason to measure on
                continue
            samples = [s for s in self.samples if s.variant == variant.name]
            decision = decide(
                baseline,
                samples,
                confidence=confidence,
                policy=policy,
                batch_blocks=batch_blocks,
                units=units,
                shared_cpu_with=shared_cpu_with,
            )
            if decision is None:  # nothing measured yet: nothing to stop on
                nothing = estimate_ratio([], confidence)
                decision = Decision(pairs=[], mean=nothing, estimate=nothing, check=None)
            decisions.append(decision)
        return decisions

    def other_runs_on_cpu(self) -> tuple[int, ...]:
        """The other perflab runs that have measured on the measuring CPU so far: the one
        holding it (this run shares it after waiting) and those that joined it (this run or
        another holds it), less those that take turns with this one; each recorded for the
        analysis, which counts it as overload, as the stopping rule does."""
        cpu = self.context.cpu
        if cpu is None:
            return ()
        others = set(cpu_lock.joined(cpu, self.started_wall_s, remove_ended=False))
        holder = cpu_lock.holder(cpu)
        if holder is not None and holder != os.getpid():
            others.add(holder)
        turns = self.context.turns
        if turns is not None:  # runs taking turns with this one sample only between its blocks
            others -= turns.partners | set(turns.takers())
        new = sorted(others - set(self.shared_cpu_with))
        if new:
            self.shared_cpu_with += tuple(new)
            self.context.sink.add_artifact(
                Artifact(
                    benchmark=self.benchmark.name,
                    variant=self.variants[0].name,
                    metric=Metric.TIME,
                    kind=KIND_SHARED_CPU,
                    content=json.dumps({"cpu": cpu, "pids": new}),
                )
            )
        return self.shared_cpu_with

    def precise_enough(self, decisions: list[Decision]) -> bool:
        """Whether to stop early (`may_stop_after`)."""
        precise = may_stop_after(
            decisions,
            self.settings.target_precision,
            equivalence_band=self.settings.equivalence_band,
            confidence=self.settings.confidence,
            family=run_family_size(self.context.experiment),
        )
        self.was_precise = self.was_precise or precise
        return precise

    def note_early_stop(self) -> None:
        """A lens that stopped once every comparison was precise enough says so: the rest of
        its share was not needed (a plan is what it may take; the budget note reads it)."""
        took_s = self.elapsed_s()
        if not self.was_precise or took_s >= EARLY_STOP_SAID * self.budget_s:
            return
        self.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"the time lens stopped after {took_s:.1f} s of its "
                f"{self.budget_s:.1f} s: every comparison was precise enough",
                benchmark=self.benchmark.name,
                metric=Metric.TIME,
            )
        )

    def note_overrun(self) -> None:
        """Minimums (generations, blocks, warm-up) win over the budget: say so when they did."""
        elapsed_s = self.elapsed_s()
        if elapsed_s <= OVERRUN_FACTOR * self.budget_s:
            return
        self.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"measuring took {elapsed_s:.0f} s, more than the budget of "
                f"{self.budget_s:.3g} s, to reach the minimum of "
                f"{self.settings.min_generations} generations (each with warm-up)",
                hint="samples are long here: lower --min-generations or --sample-ms, or "
                "raise --budget to make the budget the limit",
                benchmark=self.benchmark.name,
                metric=Metric.TIME,
            )
        )

    def stop_after(self, what: str, *, minimums_met: bool) -> bool:
        """After a generation: report progress, and stop once the minimums are met and the
        estimates are precise enough or the share is spent."""
        decisions = self.decisions()
        self.report(what, decisions)
        return minimums_met and (
            self.precise_enough(decisions) or self.elapsed_s() >= self.budget_s
        )

    def report(self, what: str, decisions: list[Decision]) -> None:
        widths = [
            d.estimate.log_half_width for d in decisions if math.isfinite(d.estimate.log_half_width)
        ]
        ci = f", CI ±{max(widths):.1%}" if widths else ""
        left_s = max(0.0, self.budget_s - self.elapsed_s())
        self.context.progress.update(
            benchmark=self.benchmark.name,
            metric=Metric.TIME,
            detail=f"{what}, {len(self.samples)} samples{ci}, ≤{left_s:.0f} s left",
            fraction=min(1.0, self.elapsed_s() / self.budget_s),
        )


class _StatementSession(_Session):
    def run(self) -> None:
        if self.context.server_rounds is not None:
            self._run_in_rounds(self.context.server_rounds)
            return
        settings = self.settings
        loops: list[int] | None = None  # per variant
        shortest_s = self._planned_generation_s()
        generation_s = shortest_s
        generation = 0
        upcoming = self._next_launch()
        prestarted: _Prestart | None = None
        try:
            while True:
                started_ns = self.clock_ns()
                launch, upcoming = upcoming, self._next_launch()
                workers = self._start(launch, prestarted)
                if prestarted is not None:
                    # sampling as long as these workers took to start keeps the next generation
                    # ready in time, and no longer: the first generation's start-up (which also
                    # compiled the variants' bytecode caches) is often longer
                    generation_s = max(shortest_s, prestarted.startup_s)
                    prestarted = None
                with self.closing(workers):
                    self._record_interpreters(workers)
                    startup_s = (self.clock_ns() - started_ns) / 1e9
                    if loops is None:
                        loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
                        # keep start-up below half of each generation's time
                        generation_s = max(generation_s, startup_s)
                    generation_s = self._fit_minimums(generation, generation_s, startup_s)
                    if self._another_generation_likely(generation, generation_s):
                        prestarted = _Prestart(self, upcoming)
                    self._sample_generation(workers, generation, loops, generation_s)
                if generation == 0:
                    loops = self._shorter_if_preempted(loops)
                generation += 1
                minimums_met = generation >= settings.min_generations
                if self.stop_after(f"generation {generation}", minimums_met=minimums_met):
                    return
        finally:
            if prestarted is not None:
                prestarted.discard()

    def _planned_generation_s(self) -> float:
        """How long each generation samples, unless start-up or the minimums say otherwise."""
        low_s, high_s = GENERATION_S_RANGE
        return min(high_s, max(low_s, self.budget_s / TARGET_GENERATIONS))

    def _start(self, launch: _Launch, prestarted: _Prestart | None) -> list[StatementWorker]:
        """This generation's workers: those started ahead, moved onto the measuring CPU, or
        fresh ones."""
        if prestarted is None:
            return self.launch_workers(
                layout=launch.layout, disable_aslr=self.settings.paired_layout, rng=launch.rng
            )
        workers = prestarted.take()
        self.pin_to_measuring_cpu(workers)
        return workers

    def _fit_minimums(self, generation: int, generation_s: float, startup_s: float) -> float:
        """Behind (workers start slower than the probe said), this and the minimum generations
        still to come sample less, down to their minimum blocks, rather than overrun."""
        if not 0 < generation < self.settings.min_generations:
            return generation_s
        return sampling_to_fit(
            generation_s,
            self.budget_s - self.elapsed_s(),
            self.settings.min_generations - generation,
            # started ahead, the next workers' start-up overlaps this sampling
            0.0 if self._started_ahead(generation) else startup_s,
        )

    def _next_launch(self) -> _Launch:
        """The next generation's layout and launch order, drawn here (in the measuring thread)
        whether it is started ahead or not, so a seeded schedule stays the same."""
        layout = generation_layout(self.rng) if self.settings.paired_layout else {}
        return _Launch(layout=layout, rng=random.Random(self.rng.getrandbits(64)))

    def _started_ahead(self, generation: int) -> bool:
        """Whether the next generation's workers start while this one measures."""
        return self._another_generation_likely(generation, 0.0)

    def _another_generation_likely(self, generation: int, generation_s: float) -> bool:
        """Start the next generation's workers while this one measures, on perflab's own CPUs
        (not the measuring one), when there are such CPUs and another generation will probably
        follow: worker start-up (interpreter, imports, setup) then costs no measuring time."""
        if self.context.cpu is None or self.context.fork_servers is not None:
            return False
        if not set(online_cpus()) - {self.context.cpu}:
            return False
        if generation + 1 < self.settings.min_generations:
            return True
        return self.elapsed_s() + generation_s < self.budget_s

    def _run_in_rounds(self, rounds: ServerRounds) -> None:
        """Generations forked from rounds of fork servers: each round starts one server per
        variant (a fresh process: its own hash seed, stack padding and physical pages, the
        set-up's imports paid once), forks `forks_per_round` generations' workers from them,
        and stops them. Every variant's server and workers of a round share one layout, as a
        fresh generation's workers do. The minimums are `min_rounds` whole rounds and
        `min_generations` generations; the budget may cut a round beyond them short."""
        done = _Rounds(rounds, round_start_s=rounds.round_start_s)
        generation_s = self._planned_generation_s()
        while not (
            done.minimums_met(self.settings)
            and self.elapsed_s() + done.round_start_s >= self.budget_s
        ):
            layout = generation_layout(self.rng) if self.settings.paired_layout else {}
            started_ns = self.clock_ns()
            with self._round_servers(layout) as servers:
                done.round_start_s = (self.clock_ns() - started_ns) / 1e9
                self._sample_round(done, servers, layout, generation_s)
            done.completed += 1
            if done.minimums_met(self.settings) and self.precise_enough(self.decisions()):
                break
        self._note_rounds(done.completed, done.generation)

    def _sample_round(
        self, done: _Rounds, servers: ForkServers, layout: dict[str, str], generation_s: float
    ) -> None:
        """The generations forked in one round, each sampling as long as `_round_sampling_s`
        says; beyond the minimums the stopping rule may cut the round short."""
        pids = [servers.server(i).process.pid for i in range(len(self.variants))]
        for fork in range(done.rounds.forks_per_round):
            fork_started_ns = self.clock_ns()
            with self.generation(
                layout=layout, disable_aslr=self.settings.paired_layout
            ) as workers:
                self._record_round(done.generation, done.completed, pids)
                self._record_interpreters(workers)
                if done.loops is None:
                    target_ns = int(self.settings.sample_target_ms * 1e6)
                    done.loops = loops_per_variant(workers, target_ns)
                fork_s = (self.clock_ns() - fork_started_ns) / 1e9
                sampling_s = self._round_sampling_s(
                    done.rounds, generation_s, done.completed, fork, done.round_start_s, fork_s
                )
                self._sample_generation(workers, done.generation, done.loops, sampling_s)
            if done.generation == 0:
                done.loops = self._shorter_if_preempted(done.loops)
            done.generation += 1
            what = f"round {done.completed + 1}, generation {done.generation}"
            if self.stop_after(what, minimums_met=done.minimums_met(self.settings)):
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
        left_s = self.budget_s - self.elapsed_s() - rounds_after * round_start_s
        return sampling_to_fit(planned_s, left_s, generations_left, fork_s)

    @contextlib.contextmanager
    def _round_servers(self, layout: dict[str, str]) -> Iterator[ForkServers]:
        """One round's fork servers, started in random order; killed at once when the round
        fails or is interrupted, closed after it."""
        servers = ForkServers(
            self.context.runner,
            self.benchmark,
            self.variants,
            default_python=self.context.default_python,
            cpu=self.context.cpu,
            timeout_s=self.settings.sample_timeout_s,
            layout=layout,
            disable_aslr=self.settings.paired_layout,
        )
        try:
            servers.started(order=launch_order(len(self.variants), self.rng))
            self.round_servers = servers
            yield servers
        except BaseException:
            servers.kill()
            raise
        finally:
            self.round_servers = None
            servers.close()

    def _record_round(self, generation: int, round_index: int, pids: list[int]) -> None:
        self.units[generation] = round_index
        self.context.sink.add_artifact(
            Artifact(
                benchmark=self.benchmark.name,
                variant=self.variants[0].name,
                metric=Metric.TIME,
                kind=KIND_SERVER_ROUND,
                content=json.dumps({"round": round_index, "servers": pids}),
                generation=generation,
            )
        )

    def _note_rounds(self, rounds: int, generations: int) -> None:
        self.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"the set-up's imports are expensive: the time lens forked its "
                f"{generations} generations from {rounds} rounds of fork servers (one fresh "
                "process per variant and round, which imported them once); forked workers "
                "share their server's hash seed and memory, so the interval is over rounds",
                hint="a larger --budget buys more rounds; docs/statistics.md (expensive "
                "set-ups) has the design",
                benchmark=self.benchmark.name,
                metric=Metric.TIME,
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
        measured = [s for s in self.samples if not s.warmup and s.run_queue_ns is not None]
        factor = LOADED_SAMPLE_MS / self.settings.sample_target_ms
        if not measured or factor >= 1:
            return loops
        preempted = sum(preemption.is_preempted(s) for s in measured) / len(measured)
        if preempted < LOADED_PREEMPTED_FRACTION:
            return loops
        self.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"{preempted:.0%} of the first generation's samples were preempted by "
                f"other processes: samples were shortened to about {LOADED_SAMPLE_MS:g} ms "
                "from the second generation on, so that fewer are",
                benchmark=self.benchmark.name,
                metric=Metric.TIME,
            )
        )
        return equal_duration_loops(
            loops, [[s for s in measured if s.variant == v.name] for v in self.variants], factor
        )

    def _record_interpreters(self, workers: list[StatementWorker]) -> None:
        for variant, worker in zip(self.variants, workers, strict=True):
            info: dict[str, str] = {
                "python_version": worker.info.python_version,
                "implementation": worker.info.implementation,
                "executable": worker.info.executable,
            }
            if worker.info.device_synchronised is not None:
                info["device_synchronised"] = worker.info.device_synchronised
            self.context.sink.add_variant_info(variant.name, info)

    def _sample_generation(
        self,
        workers: list[StatementWorker],
        generation: int,
        loops: list[int],
        generation_s: float,
    ) -> None:
        """Blocks of samples until the generation has sampled `generation_s` and its minimum
        blocks (time waited for turns on a shared CPU is not sampling: elapsed_s leaves it out)."""
        generation_start_s = self.elapsed_s()

        def measure(slot: Slot) -> None:
            measured = workers[slot.variant].sample(loops[slot.variant])
            self.record(
                self.sampler.sample(
                    slot,
                    WALL_NS,
                    measured.wall_ns,
                    loops=loops[slot.variant],
                    cpu=measured.cpu,
                    run_queue_ns=measured.run_queue_ns,
                    cpu_ns=measured.cpu_ns,
                    involuntary_switches=measured.involuntary_switches,
                )
            )

        def enough(blocks: int) -> bool:
            spent_s = self.elapsed_s() - generation_start_s
            minimum = self.settings.warmup_blocks + MIN_BLOCKS_PER_GENERATION
            return blocks >= minimum and spent_s >= generation_s

        self.sampler.blocks(measure, generation=generation, enough=enough)


@dataclass
class _Rounds:
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
class _Launch:
    layout: dict[str, str]
    rng: random.Random


class _Prestart:
    """The next generation's workers, started in a thread on perflab's own CPUs while the
    current generation measures; `take` waits for them, `discard` closes them unused."""

    def __init__(self, session: _StatementSession, launch_of: _Launch) -> None:
        self.startup_s = 0.0  # how long the workers took to start, once `take` returned

        def launch() -> list[StatementWorker]:
            started_ns = time.monotonic_ns()
            workers = session.launch_workers(
                layout=launch_of.layout,
                disable_aslr=session.settings.paired_layout,
                rng=launch_of.rng,
                off_measuring_cpu=True,
            )
            self.startup_s = (time.monotonic_ns() - started_ns) / 1e9
            return workers

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perflab-prestart")
        self._future = pool.submit(launch)
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


class _CommandSession(_Session):
    def run(self) -> None:
        envs = [variant_environment(v) for v in self.variants]
        commands = [self.benchmark.command_for(v) for v in self.variants]
        shell = self.settings.shell
        self._describe_commands([command_argv(c, shell=shell) for c in commands], envs)
        # a program that reports its own time writes its report where perflab reads it back
        self.reports: ReportFiles | None = None
        if self.benchmark.reports is None:
            self._run_commands(commands, envs)
            return
        with private_folder("report") as folder:
            self.reports = ReportFiles(self.benchmark.reports, folder, len(commands))
            reporting = [f"{c} {self.reports.arguments(i)}" for i, c in enumerate(commands)]
            self._run_commands(reporting, envs)

    def _run_commands(self, commands: Sequence[str], envs: Sequence[dict[str, str]]) -> None:
        argvs = [command_argv(c, shell=self.settings.shell) for c in commands]
        self.checked_s = -math.inf  # when the stopping rule was last evaluated
        self.warmed_s: float | None = None  # when the warm-up blocks were done
        self.unit_blocks: int | None = None  # blocks per unit of the interval
        padded: list[dict[str, str]] = []  # this block's environments
        # --ignore-failure: each variant's non-zero exit statuses by block, said once
        self.ignored: dict[int, dict[int, int]] = {}

        def before_block(block: int) -> None:
            # every block its own layout: one padding draw, the variants' strings equalised
            padded[:] = padded_environments(envs, argvs, self.rng)

        with CommandLauncher(
            self.context.runner, cpu=self.context.cpu, show_output=self.settings.show_output
        ) as launcher:

            def measure(slot: Slot) -> None:
                if slot.variant in self.failed:
                    return
                try:
                    self._prepare(launcher, slot.variant, padded[slot.variant])
                    self._run_one(launcher, argvs[slot.variant], padded[slot.variant], slot)
                except BenchmarkFailedError as error:
                    self._go_on_without(slot.variant, error)

            self.sampler.blocks(measure, before_block=before_block, enough=self._enough_blocks)
        self._note_ignored_failures()

    def _go_on_without(self, index: int, error: BenchmarkFailedError) -> None:
        """A variant that fails is measured no more and the others on, while a planned
        comparison is left among them (a crash hides nothing else); else `error` ends the
        lens."""
        failed = {self.variants[i].name for i in self.failed} | {self.variants[index].name}
        left = {v.name for v in self.variants} - failed
        pairs = self.context.experiment.comparison_pairs
        if not any(a in left and b in left for a, b in pairs):
            raise error
        self.failed[index] = error

    def _describe_commands(
        self, argvs: Sequence[tuple[str, ...]], envs: Sequence[dict[str, str]]
    ) -> None:
        for variant, argv, env in zip(self.variants, argvs, envs, strict=True):
            described = describe_executable(argv, env, variant.cwd)
            described["layout"] = layout_info(unit="block", aslr=aslr_enabled(), hash_seed=False)
            self.context.sink.add_variant_info(
                variant.name, {"commands": {self.benchmark.name: described}}
            )

    def _enough_blocks(self, blocks: int) -> bool:
        """After `blocks` blocks: stop at the maximum, or (beyond the minimum) once precise
        enough or out of the share."""
        settings = self.settings
        if blocks == settings.warmup_blocks:
            self.warmed_s = self.elapsed_s()
        if blocks < settings.min_command_blocks:
            return False
        if settings.max_command_blocks is not None and blocks >= settings.max_command_blocks:
            return True
        if self.unit_blocks is None:
            self.unit_blocks = self._choose_units(blocks)
        out_of_budget = self.elapsed_s() >= self.budget_s
        # Estimating reads every sample so far: after every block, short commands would
        # spend more time here than running (quadratic), so at most this often.
        if not out_of_budget and self.elapsed_s() - self.checked_s < STOP_CHECK_INTERVAL_S:
            return False
        self.checked_s = self.elapsed_s()
        decisions = self.decisions(self.unit_blocks)
        self.report(f"block {blocks}", decisions)
        return out_of_budget or self.precise_enough(decisions)

    def _choose_units(self, blocks: int) -> int:
        """Blocks per unit of the interval: about a second, or a tenth of the time the share
        leaves for measuring; stored for the analysis."""
        warmed_s = self.warmed_s or 0.0
        measured = blocks - self.settings.warmup_blocks
        block_s = (self.elapsed_s() - warmed_s) / max(1, measured)
        measuring_s = self.budget_s - warmed_s
        unit_blocks = command_unit_blocks(
            block_s,
            min(COMMAND_UNIT_S, measuring_s / COMMAND_UNITS_IN_SHARE),
            len(self.variants),
        )
        self._record_units(unit_blocks)
        return unit_blocks

    def _prepare(self, launcher: CommandLauncher, index: int, env: dict[str, str]) -> None:
        """--prepare: its command before each run, through the same launcher (in the variant's
        environment and directory), untimed; a failure stops the run as the command's would."""
        command = self.settings.prepare
        if command is None:
            return
        variant = self.variants[index]
        run = launcher.run(
            ("/bin/sh", "-c", command),
            env=env,
            cwd=variant.cwd,
            timeout_s=self.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.benchmark.name,
        )
        if run.timed_out or run.returncode != 0:
            how = "timed out" if run.timed_out else _describe_status(run.returncode)
            raise BenchmarkFailedError(
                f"the --prepare command {command!r} {how}",
                hint="run it by hand in the variant's directory to see why",
                variant=variant.name,
                benchmark=self.benchmark.name,
                detail=run.stderr_tail.rstrip() or None,
            )

    def _record_units(self, blocks_per_unit: int) -> None:
        self.context.sink.add_artifact(
            Artifact(
                benchmark=self.benchmark.name,
                variant=self.variants[0].name,
                metric=Metric.TIME,
                kind=KIND_COMMAND_UNITS,
                content=json.dumps({"blocks_per_unit": blocks_per_unit}),
            )
        )

    def _run_one(
        self, launcher: CommandLauncher, argv: tuple[str, ...], env: dict[str, str], slot: Slot
    ) -> None:
        variant = self.variants[slot.variant]
        run = launcher.run(
            argv,
            env=env,
            cwd=variant.cwd,
            timeout_s=self.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.benchmark.name,
        )
        if self._ignored(run):
            self.ignored.setdefault(slot.variant, {})[slot.block] = run.returncode or 0
        else:
            self._fail_unless_ok(run, variant.name)
        if self.reports is not None:
            self.record(self._reported_sample(run, slot))
            return
        self.record(
            self.sampler.sample(
                slot,
                WALL_NS,
                run.wall_ns,
                cpu=run.cpu,
                run_queue_ns=run.run_queue_ns,
                cpu_ns=run.user_ns + run.sys_ns,
                involuntary_switches=run.involuntary_switches,
            )
        )

    def _reported_sample(self, run: CommandRun, slot: Slot) -> Sample:
        """The sample the program's own report gives: its iterations' time, and the share of
        the process's waits for the CPU that fell inside them (spread evenly over the run)."""
        assert self.reports is not None
        variant = self.variants[slot.variant]
        try:
            reported = self.reports.take(slot.variant, self.benchmark.name, run.stderr_tail)
        except BenchmarkFailedError as error:
            raise BenchmarkFailedError(
                error.message,
                hint=error.hint,
                variant=variant.name,
                benchmark=self.benchmark.name,
                detail=error.detail,
            ) from None
        if not reported.counted:  # a mean alone: how much of the run it covers is unknown
            return self.sampler.sample(slot, WALL_NS, reported.real_ns, cpu=run.cpu)
        share = min(1.0, reported.real_ns / run.wall_ns) if run.wall_ns > 0 else 1.0
        switches = run.involuntary_switches
        return self.sampler.sample(
            slot,
            WALL_NS,
            reported.real_ns,
            loops=max(1, reported.iterations),
            cpu=run.cpu,
            run_queue_ns=None if run.run_queue_ns is None else round(run.run_queue_ns * share),
            cpu_ns=round(reported.cpu_ns),
            involuntary_switches=None if switches is None else round(switches * share),
        )

    def _ignored(self, run: CommandRun) -> bool:
        """--ignore-failure: a run that exited with a non-zero status is measured as any other
        (a signal or a timeout still fails: its time is not the command's)."""
        return (
            self.settings.ignore_failure
            and not run.timed_out
            and run.returncode is not None
            and run.returncode > 0
        )

    def _note_ignored_failures(self) -> None:
        """Which commands exited non-zero and were measured anyway (--ignore-failure)."""
        for index, by_block in sorted(self.ignored.items()):
            variant = self.variants[index].name
            self.context.sink.add_artifact(
                Artifact(
                    benchmark=self.benchmark.name,
                    variant=variant,
                    metric=Metric.TIME,
                    kind=KIND_EXIT_CODES,
                    content=json.dumps({str(b): c for b, c in sorted(by_block.items())}),
                )
            )
            statuses = Counter(by_block.values())
            said = ", ".join(
                f"{count} run{'' if count == 1 else 's'} with status {status}"
                for status, count in sorted(statuses.items())
            )
            self.context.sink.add_note(
                Note(
                    severity=Severity.WARNING,
                    message=f"the command exited with a non-zero status and was measured anyway "
                    f"(--ignore-failure): {said}",
                    hint="its times are those of a failing run, which may stop early; without "
                    "-i a failure stops the run",
                    benchmark=self.benchmark.name,
                    variant=variant,
                    metric=Metric.TIME,
                )
            )

    def _fail_unless_ok(self, run: CommandRun, variant: str) -> None:
        if not run.timed_out and run.returncode == 0:
            return
        how = (
            f"timed out after {self.settings.sample_timeout_s:g} s and was killed"
            if run.timed_out
            else _describe_status(run.returncode)
        )
        raise BenchmarkFailedError(
            f"the command {how}",
            hint="run it by hand in the variant's directory to see why"
            if not run.timed_out
            else "raise --sample-timeout if one run legitimately takes longer",
            variant=variant,
            benchmark=self.benchmark.name,
            detail=run.stderr_tail.rstrip() or None,
        )


def describe_executable(
    argv: tuple[str, ...], env: dict[str, str], cwd: str | None
) -> dict[str, Any]:
    """Which program a command really runs, and a digest of it: two variants that run the same
    binary by accident become visible."""
    program = argv[0]
    if os.sep not in program:
        program = shutil.which(program, path=env.get("PATH")) or program
    elif cwd is not None:
        program = os.path.join(cwd, program)
    info: dict[str, Any] = {"command": shlex.join(argv), "executable": program}
    try:
        with open(program, "rb") as binary:
            info["executable_sha256"] = hashlib.file_digest(binary, "sha256").hexdigest()
    except OSError:
        pass
    return info


def _describe_status(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        return f"was killed by signal {-returncode}"
    if returncode is not None and 128 < returncode < 160:
        # a shell reports a child killed by signal N as status 128 + N
        return f"exited with status {returncode} (a child killed by signal {returncode - 128}?)"
    return f"exited with status {returncode}"


def precise_enough(
    estimates: Sequence[RatioEstimate],
    precision: float,
    *,
    equivalence_band: float = 0.01,
    confidence: float = 0.95,
    family: int = 1,
) -> bool:
    """The stopping rule: every comparison's confidence sequence within `precision` and
    settling its verdict, from enough units. Checked after every generation, a t interval
    that is narrow is often one whose variance happens to be underestimated; the sequence holds
    at every look (stats.sequential), so stopping on it cannot manufacture a claim. `family`:
    the comparisons the run decides together; the sequences are at their level (stats.family)."""
    return may_stop_early(
        estimates,
        precision=precision,
        equivalence_band=equivalence_band,
        confidence=confidence,
        min_units=MIN_GROUPS_TO_STOP_EARLY,
        family=family,
    )


def may_stop_after(
    decisions: Sequence[Decision],
    precision: float,
    *,
    equivalence_band: float = 0.01,
    confidence: float = 0.95,
    family: int = 1,
) -> bool:
    """The time lens's early stop, on the comparisons as the analysis will decide them: the
    confidence sequences precise enough and settled (`precise_enough`), each interval the
    verdict is read off giving the sequence's verdict (a command's trimmed mean may not), and
    no overload seen. Under overload the units are biased by load the correction cannot
    repair, which no sequence bounds, and the analysis widens the interval: the run then
    measures while its budget lasts."""
    if any(d.overloaded for d in decisions):
        return False
    means = [d.mean for d in decisions]
    if not precise_enough(
        means, precision, equivalence_band=equivalence_band, confidence=confidence, family=family
    ):
        return False
    return decided_agree(
        means,
        [d.estimate for d in decisions],
        equivalence_band=equivalence_band,
        confidence=confidence,
        family=family,
    )


def aslr_enabled() -> bool:
    """Whether the kernel randomises address spaces (commands run with it as it is)."""
    try:
        with open("/proc/sys/kernel/randomize_va_space") as setting:
            return setting.read().strip() != "0"
    except OSError:
        return False


def command_unit_blocks(block_s: float, unit_s: float, variants: int) -> int:
    """Commands: how many consecutive blocks make one unit of the interval, so a unit lasts
    about `unit_s` (slow machine states are not counted as independent evidence); with two
    variants an even number, so every unit holds as many AB blocks as BA ones and an effect
    of the position in a block cancels inside it."""
    if block_s <= 0 or not math.isfinite(block_s):
        return 2 if variants == 2 else 1
    blocks = max(1, math.ceil(unit_s / block_s))
    if variants == 2 and blocks > 1 and blocks % 2:
        blocks += 1
    return blocks


# --------------------------------------------------------------------------------------------
# analysing


def variant_names(variants: Sequence[Variant]) -> list[str]:
    return [v.name for v in variants]
