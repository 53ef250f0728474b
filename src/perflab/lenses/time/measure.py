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
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from perflab.budget import ServerRounds
from perflab.document import TimePoint, TimeSeries
from perflab.errors import BenchmarkFailedError
from perflab.host import online_cpus
from perflab.lenses.time.cost import (
    TIME_GENERATION_S_RANGE,
    TIME_MIN_BLOCKS,
    TIME_TARGET_GENERATIONS,
)
from perflab.measure.commands import CommandLauncher, command_argv
from perflab.measure.fork_server import ForkServers
from perflab.measure.layout import (
    LAYOUT_PADDING_VARIABLE,
    draw_padding,
    layout_info,
    padded_environments,
)
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.session import LensSession, loops_per_variant
from perflab.measure.worker_client import StatementWorker, variant_environment
from perflab.model import (
    Artifact,
    Benchmark,
    BenchmarkKind,
    Comparison,
    Experiment,
    Measurement,
    Metric,
    Note,
    Sample,
    Settings,
    Severity,
    Variant,
)
from perflab.plan import block_orders, launch_order
from perflab.proc import ProcessRunner
from perflab.stats import noise, preemption
from perflab.stats.comparison import comparison_from
from perflab.stats.family import family_confidence, run_family_size
from perflab.stats.overload import OverloadCheck, overload_check
from perflab.stats.paired import (
    RatioEstimate,
    estimate_ratio,
    kept_pairs,
    own_log_values,
    pair_samples,
    unit_means,
)
from perflab.stats.sequential import (
    MIN_UNITS_TO_STOP_EARLY,
    may_stop_early,
    seconds_to_decide,
    sequence_alpha,
    sequence_interval,
)
from perflab.stats.summary import relative_spread
from perflab.stats.variant_values import VALUE_ESTIMATOR, VariantValues, paired_values

WALL_NS = "wall_ns"
MIN_BLOCKS_PER_GENERATION = TIME_MIN_BLOCKS  # after warm-up
# Per-process effects dominate the error on a noisy VM (docs/statistics.md), so the budget buys
# generations rather than long ones: about this many, each between these lengths ...
TARGET_GENERATIONS = TIME_TARGET_GENERATIONS
GENERATION_S_RANGE = TIME_GENERATION_S_RANGE
# artifact (baseline variant, per generation): {"round": R, "servers": [pids]} when the
# generation's workers were forked from round R's servers; the interval is then over rounds
KIND_SERVER_ROUND = "time-server-round"
# ... but worker start-up (imports) may take at most half of a generation.
MIN_GROUPS_TO_STOP_EARLY = MIN_UNITS_TO_STOP_EARLY  # units before an early stop (stats.sequential)
STOP_CHECK_INTERVAL_S = 0.25  # commands: how often the stopping rule is evaluated
OVERRUN_FACTOR = 1.5  # measuring longer than this times the budget is worth a note
COMMAND_BATCHES = 10  # commands, runs stored without a unit artifact: about this many batches
# Commands: the interval's unit is a batch of consecutive blocks lasting about this long (the
# pair ratios of blocks closer in time were correlated under load: docs/statistics.md), or a
# tenth of what the lens's share leaves after the warm-up when that is shorter; its size is
# fixed once, so the units form the sequence the stopping rule needs.
COMMAND_UNIT_S = 1.0
COMMAND_UNITS_IN_SHARE = 10
# artifact (baseline variant): {"blocks_per_unit": B}, the command batch size the run used
KIND_COMMAND_UNITS = "time-command-units"
# Busy machine: when this share of the first generation's samples was preempted, the later
# generations' samples last about this long (measured under load: 2 ms samples were preempted
# 3-11% of the time where 10 ms ones were preempted in nearly all; docs/statistics.md).
LOADED_PREEMPTED_FRACTION = 0.25
LOADED_SAMPLE_MS = 2.0


@dataclass(frozen=True)
class TimeDetails:
    n_groups: int
    n_pairs: int
    between_group_sd: float
    baseline_spread: float  # relative MAD of the baseline's per-iteration times
    variant_spread: float
    extra_seconds_to_decide: float | None
    # the confidence sequence at the run's last look (stats.sequential): what an early stop
    # is decided on; wider than the CI, which it contains
    sequence_ci_low: float = 0.0
    sequence_ci_high: float = math.inf
    # For the report's plots, not the JSON: the ratio of every generation (or batch) -- the
    # values the CI is computed over -- and every variant's raw samples of this benchmark.
    group_ratios: tuple[tuple[int, float], ...] = field(default=(), compare=False)
    group_name: str = "generation"
    series: tuple[TimeSeries, ...] = field(default=(), compare=False)
    # what the per-variant values are (the estimator, over the samples the ratio uses, with
    # the --preempted policy applied) and the plain medians of the samples as measured
    value_estimator: str = VALUE_ESTIMATOR
    value_preempted: str = "keep"
    baseline_value_measured: float = math.nan
    variant_value_measured: float = math.nan
    # the level the interval was computed at, and how many comparisons share the run's
    # confidence (stats.family)
    confidence: float = 0.95
    family_size: int = 1
    # load that correcting preempted samples cannot repair (stats.overload)
    overload: OverloadCheck | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "n_groups": self.n_groups,
            "group": self.group_name,
            "n_pairs": self.n_pairs,
            "between_group_sd": _finite_or_none(self.between_group_sd),
            "baseline_spread": self.baseline_spread,
            "variant_spread": self.variant_spread,
            "extra_seconds_to_decide": self.extra_seconds_to_decide,
            "value_estimator": self.value_estimator,
            "value_preempted": self.value_preempted,
            "baseline_value_measured": _finite_or_none(self.baseline_value_measured),
            "variant_value_measured": _finite_or_none(self.variant_value_measured),
            "confidence": self.confidence,
            "family_size": self.family_size,
            "overload": self.overload.to_json() if self.overload is not None else None,
            "sequence_ci_low": _finite_or_none(self.sequence_ci_low) or None,
            "sequence_ci_high": _finite_or_none(self.sequence_ci_high),
        }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


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
        session.run()
        session.note_overrun()

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_time(
            benchmark, variants, data, experiment.settings, family=run_family_size(experiment)
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

    def record(self, sample: Sample) -> None:
        self.samples.append(sample)
        self.context.sink.add_sample(sample)

    def estimates(self, batch_blocks: int | None = None) -> list[RatioEstimate]:
        baseline = [s for s in self.samples if s.variant == self.variants[0].name]
        policy = preemption.Preemption(self.settings.preempted)
        if len(self.variants) == 1:
            # no baseline: the variant's own time decides when to stop, by the same precision
            own = own_log_values(baseline, batch_blocks=batch_blocks, preemption=policy)
            return [estimate_ratio(own, self.settings.confidence, units=self.units or None)]
        return [
            estimate_ratio(
                pair_samples(
                    baseline,
                    [s for s in self.samples if s.variant == variant.name],
                    batch_blocks=batch_blocks,
                    preemption=policy,
                ),
                self.settings.confidence,
                units=self.units or None,
            )
            for variant in self.variants[1:]
        ]

    def precise_enough(self, estimates: list[RatioEstimate]) -> bool:
        """Whether to stop early: on the confidence sequences (stats.sequential)."""
        return precise_enough(
            estimates,
            self.settings.target_precision,
            equivalence_band=self.settings.equivalence_band,
            confidence=self.settings.confidence,
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

    def report(self, what: str, estimates: list[RatioEstimate]) -> None:
        widths = [e.log_half_width for e in estimates if math.isfinite(e.log_half_width)]
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
        low_s, high_s = GENERATION_S_RANGE
        shortest_s = min(high_s, max(low_s, self.budget_s / TARGET_GENERATIONS))
        generation_s = shortest_s
        generation = 0
        upcoming = self._next_launch()
        prestarted: _Prestart | None = None
        try:
            while True:
                started_ns = self.clock_ns()
                launch, upcoming = upcoming, self._next_launch()
                if prestarted is not None:
                    workers = prestarted.take()
                    # sampling as long as these workers took to start keeps the next generation
                    # ready in time, and no longer: the first generation's start-up (which also
                    # compiled the variants' bytecode caches) was often twice as long
                    generation_s = max(shortest_s, prestarted.startup_s)
                    prestarted = None
                    self.pin_to_measuring_cpu(workers)
                else:
                    workers = self.launch_workers(
                        layout=launch.layout, disable_aslr=settings.paired_layout, rng=launch.rng
                    )
                with self.closing(workers):
                    self._record_interpreters(workers)
                    startup_s = (self.clock_ns() - started_ns) / 1e9
                    if loops is None:
                        loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
                        # keep start-up below half of each generation's time
                        generation_s = max(generation_s, startup_s)
                    if 0 < generation < settings.min_generations:
                        # behind (workers start slower than the probe said): this and the
                        # minimum generations still to come sample less, down to their minimum
                        # blocks, rather than overrun
                        generation_s = sampling_to_fit(
                            generation_s,
                            self.budget_s - self.elapsed_s(),
                            settings.min_generations - generation,
                            # started ahead, the next workers' start-up overlaps this sampling
                            0.0 if self._started_ahead(generation) else startup_s,
                        )
                    if self._another_generation_likely(generation, generation_s):
                        prestarted = _Prestart(self, upcoming)
                    self._sample_generation(workers, generation, loops, generation_s)
                if generation == 0:
                    loops = self._shorter_if_preempted(loops)
                generation += 1
                estimates = self.estimates()
                self.report(f"generation {generation}", estimates)
                if generation >= settings.min_generations and (
                    self.precise_enough(estimates) or self.elapsed_s() >= self.budget_s
                ):
                    return
        finally:
            if prestarted is not None:
                prestarted.discard()

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
        settings = self.settings
        low_s, high_s = GENERATION_S_RANGE
        generation_s = min(high_s, max(low_s, self.budget_s / TARGET_GENERATIONS))
        loops: list[int] | None = None
        generation = 0
        completed = 0  # rounds done: all their forks, or cut short after the minimums
        round_start_s = rounds.round_start_s

        def minimums_met() -> bool:
            return completed >= rounds.min_rounds and generation >= settings.min_generations

        while not (minimums_met() and self.elapsed_s() + round_start_s >= self.budget_s):
            layout = generation_layout(self.rng) if settings.paired_layout else {}
            started_ns = self.clock_ns()
            with self._round_servers(layout) as servers:
                round_start_s = (self.clock_ns() - started_ns) / 1e9
                pids = [servers.server(i).process.pid for i in range(len(self.variants))]
                for fork in range(rounds.forks_per_round):
                    fork_started_ns = self.clock_ns()
                    with self.generation(
                        layout=layout, disable_aslr=settings.paired_layout
                    ) as workers:
                        self._record_round(generation, completed, pids)
                        self._record_interpreters(workers)
                        if loops is None:
                            loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
                        fork_s = (self.clock_ns() - fork_started_ns) / 1e9
                        self._sample_generation(
                            workers,
                            generation,
                            loops,
                            self._round_sampling_s(
                                rounds, generation_s, completed, fork, round_start_s, fork_s
                            ),
                        )
                    if generation == 0:
                        assert loops is not None
                        loops = self._shorter_if_preempted(loops)
                    generation += 1
                    estimates = self.estimates()
                    self.report(f"round {completed + 1}, generation {generation}", estimates)
                    if minimums_met() and (
                        self.precise_enough(estimates) or self.elapsed_s() >= self.budget_s
                    ):
                        break  # a round beyond the minimums, cut short
            completed += 1
            if minimums_met() and self.precise_enough(self.estimates()):
                break
        self._note_rounds(completed, generation)

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
        round is only complete with all its forks, so the minimum is whole rounds: sampled at
        the planned length, torch.add's 9 minimum generations took 36 s of a 26.5 s share."""
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
        generation_start_ns = self.clock_ns()
        warmup = self.settings.warmup_blocks
        for block, order in enumerate(block_orders(len(workers), self.rng)):
            for position, index in enumerate(order):
                measured = workers[index].sample(loops[index])
                self.record(
                    Sample(
                        benchmark=self.benchmark.name,
                        variant=self.variants[index].name,
                        metric=Metric.TIME,
                        name=WALL_NS,
                        value=measured.wall_ns,
                        loops=loops[index],
                        generation=generation,
                        block=block,
                        position=position,
                        cpu=measured.cpu,
                        at_ns=self.clock_ns() - self.start_ns,
                        warmup=block < warmup,
                        run_queue_ns=measured.run_queue_ns,
                        cpu_ns=measured.cpu_ns,
                        involuntary_switches=measured.involuntary_switches,
                    )
                )
            spent_s = (self.clock_ns() - generation_start_ns) / 1e9
            if block + 1 >= warmup + MIN_BLOCKS_PER_GENERATION and spent_s >= generation_s:
                return


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
        settings = self.settings
        envs = [variant_environment(v) for v in self.variants]
        argvs = [command_argv(self.benchmark.command_for(v)) for v in self.variants]
        min_blocks = settings.min_command_blocks
        for variant, argv, env in zip(self.variants, argvs, envs, strict=True):
            described = describe_executable(argv, env, variant.cwd)
            described["layout"] = layout_info(unit="block", aslr=aslr_enabled(), hash_seed=False)
            self.context.sink.add_variant_info(
                variant.name, {"commands": {self.benchmark.name: described}}
            )
        max_blocks = settings.max_command_blocks
        checked_s = -math.inf
        warmed_s: float | None = None
        unit_blocks: int | None = None
        with CommandLauncher(self.context.runner, cpu=self.context.cpu) as launcher:
            for block, order in enumerate(block_orders(len(self.variants), self.rng)):
                # every block its own layout: one padding draw, the variants' strings equalised
                padded = padded_environments(envs, argvs, self.rng)
                for position, index in enumerate(order):
                    self._prepare(launcher, index, padded[index])
                    self._run_one(launcher, index, argvs[index], padded[index], block, position)
                if block + 1 == settings.warmup_blocks:
                    warmed_s = self.elapsed_s()
                if block + 1 < min_blocks:
                    continue
                if max_blocks is not None and block + 1 >= max_blocks:
                    return
                if unit_blocks is None:
                    measured = block + 1 - settings.warmup_blocks
                    block_s = (self.elapsed_s() - (warmed_s or 0.0)) / max(1, measured)
                    # about a second, or a tenth of the time the share leaves for measuring
                    measuring_s = self.budget_s - (warmed_s or 0.0)
                    unit_blocks = command_unit_blocks(
                        block_s,
                        min(COMMAND_UNIT_S, measuring_s / COMMAND_UNITS_IN_SHARE),
                        len(self.variants),
                    )
                    self._record_units(unit_blocks)
                out_of_budget = self.elapsed_s() >= self.budget_s
                # Estimating reads every sample so far: after every block, short commands
                # would spend more time here than running (quadratic), so at most this often.
                if not out_of_budget and self.elapsed_s() - checked_s < STOP_CHECK_INTERVAL_S:
                    continue
                checked_s = self.elapsed_s()
                estimates = self.estimates(unit_blocks)
                self.report(f"block {block + 1}", estimates)
                if out_of_budget or self.precise_enough(estimates):
                    return

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
        self,
        launcher: CommandLauncher,
        index: int,
        argv: tuple[str, ...],
        env: dict[str, str],
        block: int,
        position: int,
    ) -> None:
        variant = self.variants[index]
        run = launcher.run(
            argv,
            env=env,
            cwd=variant.cwd,
            timeout_s=self.settings.sample_timeout_s,
            variant=variant.name,
            benchmark=self.benchmark.name,
        )
        if run.timed_out or run.returncode != 0:
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
                variant=variant.name,
                benchmark=self.benchmark.name,
                detail=run.stderr_tail.rstrip() or None,
            )
        self.record(
            Sample(
                benchmark=self.benchmark.name,
                variant=variant.name,
                metric=Metric.TIME,
                name=WALL_NS,
                value=run.wall_ns,
                loops=1,
                generation=0,
                block=block,
                position=position,
                cpu=run.cpu,
                at_ns=self.clock_ns() - self.start_ns,
                warmup=block < self.settings.warmup_blocks,
                run_queue_ns=run.run_queue_ns,
                cpu_ns=run.user_ns + run.sys_ns,
                involuntary_switches=run.involuntary_switches,
            )
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
) -> bool:
    """The stopping rule: every comparison's confidence sequence within `precision` and
    settling its verdict, from enough units. Checked after every generation, a t interval
    that is narrow is often one whose variance happens to be underestimated; the sequence holds
    at every look (stats.sequential), so stopping on it cannot manufacture a claim."""
    return may_stop_early(
        estimates,
        precision=precision,
        equivalence_band=equivalence_band,
        confidence=confidence,
        min_units=MIN_GROUPS_TO_STOP_EARLY,
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


def command_units_of(data: BenchmarkData, measured_blocks: int) -> int:
    """The blocks per unit a stored command run used (its artifact); runs stored before the
    artifact existed were batched into about COMMAND_BATCHES batches."""
    for artifact in data.artifacts:
        if artifact.kind == KIND_COMMAND_UNITS:
            return int(json.loads(artifact.content)["blocks_per_unit"])
    return command_batch_blocks(measured_blocks)


def command_batch_blocks(measured_blocks: int) -> int:
    """Commands stored without a unit artifact: consecutive blocks grouped into about ten
    batches, re-formed as blocks arrive (a unit that changes cannot carry a confidence
    sequence, hence the artifact). Once there are enough blocks, a batch holds at least two."""
    if measured_blocks < 2 * COMMAND_BATCHES:
        return max(1, measured_blocks // COMMAND_BATCHES)
    return max(2, measured_blocks // COMMAND_BATCHES)


# --------------------------------------------------------------------------------------------
# analysing


def analyse_time(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    settings: Settings,
    *,
    family: int = 1,
) -> LensAnalysis:
    """Every variant against the first. `family`: how many comparisons the run decides
    together; each interval is computed at the level that keeps them all at the run's
    confidence (stats.family)."""
    baseline_name = variants[0]
    baseline = [s for s in data.samples_of(baseline_name, WALL_NS)]
    measured_baseline = [s for s in baseline if not s.warmup]
    batch_blocks = None
    if benchmark.kind is BenchmarkKind.COMMAND:
        blocks = {s.block for s in measured_baseline}
        batch_blocks = command_units_of(data, len(blocks))
    elapsed_s = max((s.at_ns for s in data.samples), default=0) / 1e9
    comparisons = []
    notes: list[Note] = []
    series = time_series(data.samples, variants)
    policy = preemption.Preemption(settings.preempted)
    units = server_rounds_of(data)
    for name in variants:
        notes += _noise_notes(benchmark, name, data.samples_of(name, WALL_NS), settings)
    notes += _preemption_notes(benchmark, variants, data, policy)
    for name in variants[1:]:
        samples = data.samples_of(name, WALL_NS)
        pairs = pair_samples(baseline, samples, batch_blocks=batch_blocks, preemption=policy)
        if not pairs and not pair_samples(baseline, samples, batch_blocks=batch_blocks):
            continue  # nothing measured; excluding every pair leaves an undecided comparison
        confidence = family_confidence(settings.confidence, family)
        estimate = estimate_ratio(pairs, confidence, units)
        finding = noise.per_process_finding(estimate.between_group_sd, estimate.n_groups)
        if finding is not None and benchmark.kind is BenchmarkKind.STATEMENT:
            notes.append(_note(benchmark, name, finding))
        check = overload_check(baseline, samples, estimate, batch_blocks=batch_blocks, units=units)
        if check is not None and check.seen:
            estimate = replace(estimate, ci_low=check.ci_low, ci_high=check.ci_high)
            notes.append(_overload_note(benchmark, baseline_name, name, check))
        kept = kept_pairs(baseline, samples, batch_blocks=batch_blocks, preemption=policy)
        comparison = _time_comparison(
            benchmark,
            baseline_name,
            name,
            _Sides(measured_baseline, samples, kept, units),
            estimate,
            settings,
            elapsed_s,
            len(variants) - 1,
        )
        if isinstance(comparison.details, TimeDetails):
            comparison = replace(
                comparison,
                details=replace(
                    comparison.details,
                    family_size=family,
                    overload=check,
                    # measuring longer narrows the noise, not a bias the load put in
                    extra_seconds_to_decide=None
                    if check is not None and check.seen
                    else comparison.details.extra_seconds_to_decide,
                ),
            )
        if isinstance(comparison.details, TimeDetails):
            ratios = tuple(
                (group, math.exp(mean)) for group, mean in unit_means(pairs, units).items()
            )
            details = replace(
                comparison.details,
                group_ratios=ratios,
                group_name="batch"
                if batch_blocks is not None
                else ("server round" if units else "generation"),
                series=series,
            )
            comparison = replace(comparison, details=details)
        comparisons.append(comparison)
    measurements = tuple(
        own
        for name in variants
        if (own := own_time(benchmark, name, data, settings, batch_blocks, units)) is not None
    )
    return LensAnalysis(
        comparisons=tuple(comparisons), notes=tuple(notes), measurements=measurements
    )


def own_time(
    benchmark: Benchmark,
    variant: str,
    data: BenchmarkData,
    settings: Settings,
    batch_blocks: int | None,
    units: dict[int, int] | None,
) -> Measurement | None:
    """A variant's own time per iteration with its interval (over the same groups as a
    comparison's), and the plain figures of its measured samples (hyperfine's)."""
    samples = [s for s in data.samples_of(variant, WALL_NS) if not s.warmup]
    if not samples:
        return None
    policy = preemption.Preemption(settings.preempted)
    estimate = estimate_ratio(
        own_log_values(samples, batch_blocks=batch_blocks, preemption=policy),
        settings.confidence,
        units,
    )
    times = np.array([s.per_iteration for s in samples], dtype=float)
    cpu = [s.cpu_ns / s.loops for s in samples if s.cpu_ns is not None]
    return Measurement(
        benchmark=benchmark.name,
        metric=Metric.TIME,
        variant=variant,
        value=estimate.ratio,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        unit="ns",
        n_groups=estimate.n_groups,
        group_name="batch"
        if batch_blocks is not None
        else ("server round" if units else "generation"),
        mean=float(times.mean()),
        stddev=float(times.std(ddof=1)) if len(times) > 1 else math.nan,
        median=float(np.median(times)),
        min=float(times.min()),
        max=float(times.max()),
        cpu_mean=float(np.mean(cpu)) if cpu else None,
        times=tuple(float(t) for t in times),
        series=time_series(data.samples, [variant])[0],
    )


def server_rounds_of(data: BenchmarkData) -> dict[int, int] | None:
    """Generation -> the server round its workers were forked in (the unit of the interval),
    or None when every generation's workers were fresh processes."""
    rounds = {
        artifact.generation: int(json.loads(artifact.content)["round"])
        for artifact in data.artifacts
        if artifact.kind == KIND_SERVER_ROUND
    }
    return rounds or None


def time_series(samples: Sequence[Sample], variants: Sequence[str]) -> tuple[TimeSeries, ...]:
    """Every variant's wall-time samples per iteration, at their time since the benchmark's
    first sample: the raw data of the report's scatter plot."""
    wall = [s for s in samples if s.name == WALL_NS]
    start = min((s.at_ns for s in wall), default=0)
    return tuple(
        TimeSeries(
            label=name + (" (baseline)" if k == 0 else ""),
            index=k,
            points=tuple(
                TimePoint((s.at_ns - start) / 1e9, s.per_iteration, s.generation, s.warmup)
                for s in wall
                if s.variant == name
            ),
        )
        for k, name in enumerate(variants)
    )


@dataclass(frozen=True)
class _Sides:
    """One comparison's samples: as measured, and as the decision pairs them."""

    baseline: list[Sample]  # measured (not warm-up)
    variant: list[Sample]
    kept: list[tuple[int, Sample, Sample]]  # stats.paired.kept_pairs, the policy applied
    units: dict[int, int] | None


def _time_comparison(
    benchmark: Benchmark,
    baseline_name: str,
    name: str,
    sides: _Sides,
    estimate: RatioEstimate,
    settings: Settings,
    elapsed_s: float,
    comparisons: int = 1,
) -> Comparison:
    """The columns come from the samples the ratio uses, by the same estimator
    (stats.variant_values): raw medians next to a corrected ratio disagreed."""
    base_values = [s.per_iteration for s in sides.baseline]
    variant_values = [s.per_iteration for s in sides.variant if not s.warmup]
    values = paired_values(sides.kept, sides.units)
    if not sides.kept and base_values and variant_values:
        # every pair excluded (--preempted exclude): no ratio, the samples as measured
        values = VariantValues(
            float(np.median(base_values)),
            float(np.median(variant_values)),
            relative_spread(base_values),
            relative_spread(variant_values),
        )
    # one sequence per comparison the stopping rule watched, as it did; never narrower than
    # the interval reported (which an overload check may have widened)
    low, high = sequence_interval(estimate, sequence_alpha(settings.confidence, comparisons))
    low, high = min(low, estimate.ci_low), max(high, estimate.ci_high)
    return comparison_from(
        estimate,
        equivalence_band=settings.equivalence_band,
        benchmark=benchmark.name,
        metric=Metric.TIME,
        baseline=baseline_name,
        variant=name,
        baseline_value=values.baseline,
        variant_value=values.variant,
        unit="ns",
        details=TimeDetails(
            n_groups=estimate.n_groups,
            n_pairs=estimate.n_pairs,
            between_group_sd=estimate.between_group_sd,
            baseline_spread=values.baseline_spread,
            variant_spread=values.variant_spread,
            extra_seconds_to_decide=seconds_to_decide(
                estimate, settings.equivalence_band, elapsed_s
            ),
            sequence_ci_low=low,
            sequence_ci_high=high,
            value_preempted=settings.preempted,
            baseline_value_measured=float(np.median(base_values)) if base_values else math.nan,
            variant_value_measured=float(np.median(variant_values)) if variant_values else math.nan,
            confidence=estimate.confidence,
        ),
    )


def _overload_note(benchmark: Benchmark, baseline: str, variant: str, check: OverloadCheck) -> Note:
    return Note(
        severity=Severity.WARNING,
        message=check.message(baseline, variant),
        hint="give the measuring CPU to perflab alone: close what else runs on it, or pin "
        "the run to a CPU nothing else uses (--cpu N); perflab doctor shows the load",
        benchmark=benchmark.name,
        variant=variant,
        metric=Metric.TIME,
    )


def _noise_notes(
    benchmark: Benchmark, variant: str, samples: list[Sample], settings: Settings
) -> list[Note]:
    measured = [s for s in samples if not s.warmup]
    if not measured:
        return []
    per_iteration = [s.per_iteration for s in measured]
    findings = [
        noise.drift_finding([s.at_ns for s in measured], per_iteration),
        noise.outlier_finding(per_iteration),
        noise.bimodality_finding(per_iteration),
        noise.migration_finding([s.cpu for s in measured], _pinned_cpu(settings, measured)),
    ]
    return [_note(benchmark, variant, f) for f in findings if f is not None]


# Other processes taking this share of the measuring CPU make the run's figures "under load".
LOADED_SHARE = 0.10


def _preemption_notes(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    policy: preemption.Preemption,
) -> list[Note]:
    """How much of the measuring other processes took (from the samples' own accounting), and
    from which variants' samples: one note for the benchmark, over every variant measured, so
    that a design analysed in several groups (a stack's steps) says it once."""
    samples = [s for s in data.samples if s.name == WALL_NS]
    if not preemption.accounted(samples):
        return []
    measured = list(dict.fromkeys(s.variant for s in samples))
    # the group's order (its baseline first) when it is every variant; else one order for all
    everyone = list(variants) if set(measured) <= set(variants) else measured
    summary = preemption.summarise(samples, everyone, policy)
    if summary.n_preempted == 0 and summary.lost_share < 0.01:
        return []
    loaded = summary.lost_share >= LOADED_SHARE
    shares = []
    for name in everyone:
        own = [s for s in samples if s.variant == name]
        shares.append(f"{name} {preemption.summarise(own, [name], policy).lost_share:.0%}")
    return [
        Note(
            severity=Severity.WARNING if loaded else Severity.INFO,
            message=summary.message(policy)
            + (f" (of each variant's samples: {', '.join(shares)})" if len(everyone) > 1 else ""),
            hint="the machine was busy: close what else runs, or measure longer (--budget); "
            "perflab doctor shows the current load"
            if loaded
            else None,
            benchmark=benchmark.name,
            metric=Metric.TIME,
        )
    ]


def _pinned_cpu(settings: Settings, samples: list[Sample]) -> int | None:
    """The CPU the run was pinned to: the setting, or (auto) the one most samples ran on."""
    if not settings.pin:
        return None
    if settings.cpu is not None:
        return settings.cpu
    cpus = [s.cpu for s in samples if s.cpu is not None]
    return max(set(cpus), key=cpus.count) if cpus else None


# Findings that say the ratio itself may be off; the others describe the per-variant times.
_WARNING_KINDS = frozenset({"drift", "migration", "per-process"})


def _note(benchmark: Benchmark, variant: str, finding: noise.Finding) -> Note:
    return Note(
        severity=Severity.WARNING if finding.kind in _WARNING_KINDS else Severity.INFO,
        message=finding.message,
        hint=finding.hint,
        benchmark=benchmark.name,
        variant=variant,
        metric=Metric.TIME,
    )


def variant_names(variants: Sequence[Variant]) -> list[str]:
    return [v.name for v in variants]
