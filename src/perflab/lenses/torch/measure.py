"""The torch lens: the ops torch.profiler sees in each variant, and how they changed.

Statements only. Per generation, one fresh worker per variant (random launch order), pinned to the
measuring CPU like the time lens's; torch is imported inside the variant's own interpreter. The
loop count is calibrated once, without the profiler. In each generation the variants alternate
profiles of that many loops (block 0 a short warm-up profile: the first profile of a process pays
for the profiler's start-up and cold caches). Every profile's op table is stored as an artifact,
its per-op counts and times and its total self CPU time as samples.

Analysis: analyse.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from perflab.errors import ConfigError
from perflab.lenses.torch import DESCRIPTOR
from perflab.lenses.torch.analyse import (
    KIND_OPS,
    KIND_WARMUP_OPS,
    OP_CALLS,
    OP_CPU_US,
    OP_SELF_CPU_US,
    SELF_CPU_US,
    analyse_torch,
)
from perflab.lenses.torch.ops import (
    OpTable,
    OpTableFormatError,
    parse_op_table,
)
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.session import LensSession, loops_per_variant
from perflab.measure.worker_client import StatementWorker, WorkerOps
from perflab.model import (
    Artifact,
    Benchmark,
    BenchmarkKind,
    Experiment,
    Metric,
    Note,
    Sample,
)
from perflab.plan import block_orders
from perflab.proc import ProcessRunner
from perflab.stats.family import family_settings

MEASURED_BLOCKS = 2  # profiles per variant and generation, after the warm-up one
MIN_GENERATIONS = 2  # up to --min-generations, as many as its share of the budget holds
WARMUP_LOOPS = 50
# Every op call becomes a profiler event held in memory until key_averages(), and costs a few µs
# of profiler overhead: more loops than this add little but time and memory.
MAX_LOOPS = 2000


class TorchLens:
    metric = Metric.TORCH

    def __init__(self, clock_ns: Any = time.monotonic_ns) -> None:
        self._clock_ns = clock_ns

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        for benchmark in experiment.benchmarks:
            _require_statement(benchmark)
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        _require_statement(benchmark)
        _Session(benchmark, context, self._clock_ns).run()

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_torch(benchmark, variants, data, family_settings(experiment))


WORKER_OPS = DESCRIPTOR.worker_handlers or ""  # the source sent to the workers, run there


def torch_profile(worker: StatementWorker, loops: int) -> OpTable:
    """Run `loops` iterations under torch.profiler in the worker; torch's op table for them."""
    # the first profile of a process initialises the profiler, which can take seconds
    reply = worker.call(
        {"op": "torch_profile", "loops": loops}, timeout_s=max(worker.timeout_s, 120.0)
    )
    if reply.get("phase") == "torch":
        raise worker.error(
            "torch cannot be imported in this variant's interpreter",
            hint="the torch lens runs torch.profiler inside each variant: install torch "
            "there (python=), or leave out --metric torch",
            detail=str(reply.get("error", "")).rstrip(),
        )
    if not reply.get("ok"):
        raise worker.failure(reply)
    try:
        return parse_op_table(reply)
    except OpTableFormatError as error:
        raise worker.error(
            "the worker's torch profile could not be read", detail=str(error)
        ) from error


def _require_statement(benchmark: Benchmark) -> None:
    if benchmark.kind is not BenchmarkKind.STATEMENT:
        raise ConfigError(
            "the torch lens profiles Python statements, not commands",
            hint="use --stmt/--setup for this benchmark, or leave out --metric torch",
            benchmark=benchmark.name,
        )


# --------------------------------------------------------------------------------------------
# measuring


class _Session(LensSession):
    metric = Metric.TORCH

    def run(self) -> None:
        loops: list[int] | None = None  # per variant
        generations = max(2, self.settings.min_generations)
        self._warm_servers()
        for generation in range(generations):
            # its share of the budget decides how many beyond two (a CI needs two): another
            # generation is started only when one more (as long as the mean so far) fits
            if generation >= MIN_GENERATIONS:
                mean_s = self.elapsed_s() / generation
                if self.elapsed_s() + mean_s > self.context.lens_budget_s:
                    return
            self.context.progress.update(
                benchmark=self.benchmark.name,
                metric=Metric.TORCH,
                detail=f"torch.profiler, generation {generation + 1}/{generations}",
                fraction=generation / generations,
            )
            with self.generation(ops=(WorkerOps.from_module(WORKER_OPS),)) as workers:
                if loops is None:
                    target_ns = int(self.settings.sample_target_ms * 1e6)
                    loops = [min(MAX_LOOPS, n) for n in loops_per_variant(workers, target_ns)]
                self._profile_generation(workers, generation, loops)

    def _warm_servers(self) -> None:
        """Forked workers: one empty profiler session in each server, so that no generation's
        child pays the profiler's initialisation (1.1-1.9 s a process here) in its warm-up
        profile; what the children then profile is the same (the warm-up block stays)."""
        servers = self.fork_servers
        if servers is None:
            return
        ops = WorkerOps.from_module(WORKER_OPS)
        for index in range(len(self.variants)):
            # a failure is left to the first generation, which reports it with its phase
            servers.server(index).call(ops, {"op": "torch_warm"})

    def _profile_generation(
        self, workers: list[StatementWorker], generation: int, loops: list[int]
    ) -> None:
        orders = block_orders(len(workers), self.rng)
        for block in range(1 + MEASURED_BLOCKS):
            warmup = block == 0
            for position, index in enumerate(next(orders)):
                own = loops[index]
                table = torch_profile(workers[index], min(own, WARMUP_LOOPS) if warmup else own)
                self._store(table, self.variants[index].name, generation, block, position, warmup)

    def _store(
        self, table: OpTable, variant: str, generation: int, block: int, position: int, warmup: bool
    ) -> None:
        sink = self.context.sink
        sink.add_artifact(
            Artifact(
                benchmark=self.benchmark.name,
                variant=variant,
                metric=Metric.TORCH,
                kind=KIND_WARMUP_OPS if warmup else KIND_OPS,
                content=json.dumps(table.to_json()),
                generation=generation,
            )
        )
        at_ns = self.clock_ns() - self.start_ns
        values = [(SELF_CPU_US, table.self_cpu_us)]
        for op in table.ops:
            values += [
                (OP_CALLS + op.name, float(op.count)),
                (OP_SELF_CPU_US + op.name, op.self_cpu_us),
                (OP_CPU_US + op.name, op.cpu_us),
            ]
        for name, value in values:
            sink.add_sample(
                Sample(
                    benchmark=self.benchmark.name,
                    variant=variant,
                    metric=Metric.TORCH,
                    name=name,
                    value=value,
                    loops=table.loops,
                    generation=generation,
                    block=block,
                    position=position,
                    cpu=self.context.cpu,
                    at_ns=at_ns,
                    warmup=warmup,
                )
            )
        sink.add_variant_info(
            variant,
            {"torch": {"version": table.torch_version, "cpu_capability": table.cpu_capability}},
        )
