"""The rss lens: how much memory each variant needs.

Statements: in fresh workers per generation (as the other lenses), the lens's own worker op
(`worker_ops.py`) runs the loop and reports the worker's peak resident set size, the peak of
memory allocated while the loop ran (tracemalloc), and the memory blocks the loop left allocated
per iteration (a leak grows them). Commands: the peak RSS of each run, as `wait4` reports it to
the command launcher. Variants alternate in blocks, the first block of each generation warms up;
the ratio and its CI are over generations (statements) or blocks (commands, each run its own
process), like the time lens's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perflab.errors import BenchmarkFailedError
from perflab.lenses.rss import DESCRIPTOR, RSS
from perflab.lenses.rss.cost import RSS_BLOCKS
from perflab.measure.commands import CommandLauncher, command_argv
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.session import LensSession
from perflab.measure.worker_client import StatementWorker, WorkerOps, variant_environment
from perflab.model import (
    Benchmark,
    BenchmarkKind,
    Comparison,
    Experiment,
    Note,
    Sample,
    Settings,
    Severity,
)
from perflab.plan import block_orders
from perflab.proc import ProcessRunner
from perflab.stats.comparison import comparison_from
from perflab.stats.family import family_settings
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.summary import per_iteration

MAXRSS_KB = "maxrss_kb"  # peak resident set size of the process, kB (per sample, not per loop)
PEAK_ALLOC_BYTES = "peak_alloc_bytes"  # peak allocated while the loop ran (per sample)
NET_BLOCKS = "net_blocks"  # blocks left allocated after the loop (per iteration: value / loops)
# commands: wait4's peak RSS of `true` run the same way. The kernel keeps a process's peak RSS
# across exec, so a command's reads at least what the launcher had when it forked it.
FLOOR_KB = "floor_kb"
FLOOR_MARGIN = 1.05  # a peak within 5% of the floor may be the launcher's, not the command's
UNITS = {MAXRSS_KB: "kB", PEAK_ALLOC_BYTES: "B"}
COMPARED = (MAXRSS_KB, PEAK_ALLOC_BYTES)
MAX_LOOPS = 1000  # tracemalloc slows every allocation: keep one sample short
WORKER_OPS = DESCRIPTOR.worker_handlers or ""


@dataclass(frozen=True)
class RssReading:
    loops: int
    maxrss_kb: int | None
    peak_alloc_bytes: int
    net_blocks: int


class RssLens:
    metric = RSS

    def __init__(self, clock_ns: Any = time.monotonic_ns) -> None:
        self._clock_ns = clock_ns

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        if benchmark.kind is BenchmarkKind.STATEMENT:
            _StatementSession(benchmark, context, self._clock_ns).run()
        else:
            _CommandSession(benchmark, context, self._clock_ns).run()

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_rss(benchmark, variants, data, family_settings(experiment))


def rss_sample(worker: StatementWorker, loops: int) -> RssReading:
    """The lens's own request to a worker, and its reply parsed."""
    reply = worker.call({"op": "rss_sample", "loops": loops})
    if not reply.get("ok"):
        raise worker.failure(reply)
    try:
        maxrss = reply.get("maxrss_kb")
        return RssReading(
            loops=int(reply["loops"]),
            maxrss_kb=None if maxrss is None else int(maxrss),
            peak_alloc_bytes=int(reply["peak_alloc_bytes"]),
            net_blocks=int(reply["net_blocks"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise worker.error(
            "the worker's memory reading could not be read", detail=repr(reply)
        ) from error


# --------------------------------------------------------------------------------------------
# measuring


class _StatementSession(LensSession):
    def run(self) -> None:
        loops: int | None = None
        generations = max(2, self.settings.min_generations)  # a CI needs two
        ops = (WorkerOps.from_module(WORKER_OPS),)
        for generation in range(generations):
            self.context.progress.update(
                benchmark=self.benchmark.name,
                metric=RSS,
                detail=f"memory, generation {generation + 1}/{generations}",
                fraction=generation / generations,
            )
            with self.generation(ops=ops) as workers:
                if loops is None:
                    # every variant calibrates (one may be far slower than another); all run
                    # the slowest one's count, so peaks over the same number of iterations
                    # compare, and no sample runs far beyond --sample-ms
                    target_ns = int(self.settings.sample_target_ms * 1e6)
                    loops = min(MAX_LOOPS, *(worker.calibrate(target_ns) for worker in workers))
                orders = block_orders(len(workers), self.rng)
                for block in range(RSS_BLOCKS):  # the first block warms up (first-use allocations)
                    for position, index in enumerate(next(orders)):
                        reading = rss_sample(workers[index], loops)
                        values: list[tuple[str, float, int]] = [
                            (PEAK_ALLOC_BYTES, float(reading.peak_alloc_bytes), 1),
                            (NET_BLOCKS, float(reading.net_blocks), reading.loops),
                        ]
                        if reading.maxrss_kb is not None:
                            values.append((MAXRSS_KB, float(reading.maxrss_kb), 1))
                        for name, value, per in values:
                            self._record(index, name, value, per, generation, block, position)

    def _record(
        self,
        index: int,
        name: str,
        value: float,
        loops: int,
        generation: int,
        block: int,
        position: int,
    ) -> None:
        self.context.sink.add_sample(
            Sample(
                benchmark=self.benchmark.name,
                variant=self.variants[index].name,
                metric=RSS,
                name=name,
                value=value,
                loops=loops,
                generation=generation,
                block=block,
                position=position,
                cpu=self.context.cpu,
                at_ns=self.clock_ns() - self.start_ns,
                warmup=block == 0,
            )
        )


class _CommandSession(LensSession):
    def run(self) -> None:
        envs = [variant_environment(v) for v in self.variants]
        argvs = [command_argv(self.benchmark.command_for(v)) for v in self.variants]
        blocks = 1 + max(2, self.settings.min_generations)  # one warm-up block (page cache)
        orders = block_orders(len(self.variants), self.rng)
        with CommandLauncher(self.context.runner, cpu=self.context.cpu) as launcher:
            for index, variant in enumerate(self.variants):
                floor = launcher.run(
                    ("true",),
                    env=envs[index],
                    cwd=variant.cwd,
                    timeout_s=self.settings.sample_timeout_s,
                    variant=variant.name,
                    benchmark=self.benchmark.name,
                )
                self.context.sink.add_sample(
                    Sample(
                        benchmark=self.benchmark.name,
                        variant=variant.name,
                        metric=RSS,
                        name=FLOOR_KB,
                        value=float(floor.maxrss_kb),
                        cpu=floor.cpu,
                    )
                )
            for block in range(blocks):
                for position, index in enumerate(next(orders)):
                    variant = self.variants[index]
                    run = launcher.run(
                        argvs[index],
                        env=envs[index],
                        cwd=variant.cwd,
                        timeout_s=self.settings.sample_timeout_s,
                        variant=variant.name,
                        benchmark=self.benchmark.name,
                    )
                    if run.timed_out or run.returncode != 0:
                        raise BenchmarkFailedError(
                            "the command timed out"
                            if run.timed_out
                            else f"the command exited with status {run.returncode}",
                            hint="run it by hand in the variant's directory to see why",
                            variant=variant.name,
                            benchmark=self.benchmark.name,
                            detail=run.stderr_tail.rstrip() or None,
                        )
                    # every run is its own process: each block is a group of its own
                    self.context.sink.add_sample(
                        Sample(
                            benchmark=self.benchmark.name,
                            variant=variant.name,
                            metric=RSS,
                            name=MAXRSS_KB,
                            value=float(run.maxrss_kb),
                            loops=1,
                            generation=block,
                            block=0,
                            position=position,
                            cpu=run.cpu,
                            at_ns=self.clock_ns() - self.start_ns,
                            warmup=block == 0,
                        )
                    )


# --------------------------------------------------------------------------------------------
# analysing


@dataclass(frozen=True)
class RssDetails:
    measure: str
    n_groups: int
    baseline_net_blocks_per_iteration: float | None
    variant_net_blocks_per_iteration: float | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rss_measure": self.measure, "n_groups": self.n_groups}
        if self.baseline_net_blocks_per_iteration is not None:
            out["net_blocks_per_iteration"] = {
                "baseline": self.baseline_net_blocks_per_iteration,
                "variant": self.variant_net_blocks_per_iteration,
            }
        return out


_MEASURES = {
    MAXRSS_KB: "peak resident set size of the process",
    PEAK_ALLOC_BYTES: "peak memory allocated while the loop ran (tracemalloc)",
}


def _measured_per_iteration(samples: Sequence[Sample]) -> float | None:
    """The per-iteration value, None when nothing was measured."""
    value = per_iteration(samples)
    return None if math.isnan(value) else value


def analyse_rss(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: per measure, each variant against the baseline."""
    baseline = variants[0]
    comparisons: list[Comparison] = []
    notes: list[Note] = []
    blocks = {name: _measured_per_iteration(data.samples_of(name, NET_BLOCKS)) for name in variants}
    floor_kb = max((s.value for s in data.samples if s.name == FLOOR_KB), default=None)
    for measure in COMPARED:
        base_samples = data.samples_of(baseline, measure)
        base_value = _measured_per_iteration(base_samples)
        if base_value is None:
            continue
        for name in variants[1:]:
            samples = data.samples_of(name, measure)
            value = _measured_per_iteration(samples)
            if value is None:
                continue
            estimate = estimate_ratio(pair_samples(base_samples, samples), settings.confidence)
            if math.isnan(estimate.ratio):
                if measure == PEAK_ALLOC_BYTES and base_value == value == 0:
                    continue  # the loop allocates nothing in either: nothing to compare
                notes.append(
                    Note(
                        Severity.INFO,
                        f"{_MEASURES[measure]} is zero in {name!r} or the baseline: no ratio",
                        benchmark=benchmark.name,
                        variant=name,
                        metric=RSS,
                    )
                )
                continue
            if (
                measure == MAXRSS_KB
                and floor_kb is not None
                and min(base_value, value) <= floor_kb * FLOOR_MARGIN
            ):
                notes.append(
                    Note(
                        Severity.WARNING,
                        f"the peak RSS of {name!r} or the baseline ({min(base_value, value):,.0f}"
                        f" kB) is not above what `true` reads started the same way "
                        f"({floor_kb:,.0f} kB): the kernel keeps the launching process's peak "
                        "across exec, so a smaller peak cannot be seen",
                        hint="the ratio then understates the difference; below that floor, "
                        "measure the program's memory as a statement (--stmt)",
                        benchmark=benchmark.name,
                        variant=name,
                        metric=RSS,
                    )
                )
            comparisons.append(
                comparison_from(
                    estimate,
                    equivalence_band=settings.equivalence_band,
                    benchmark=benchmark.name,
                    metric=RSS,
                    baseline=baseline,
                    variant=name,
                    baseline_value=base_value,
                    variant_value=value,
                    unit=UNITS[measure],
                    event=measure,
                    details=RssDetails(
                        measure=_MEASURES[measure],
                        n_groups=estimate.n_groups,
                        baseline_net_blocks_per_iteration=blocks[baseline],
                        variant_net_blocks_per_iteration=blocks[name],
                    ),
                )
            )
    return LensAnalysis(comparisons=tuple(comparisons), notes=tuple(notes))
