"""The torch lens: the ops torch.profiler sees in each variant, and how they changed.

Statements only. Per generation, one fresh worker per variant (random launch order), pinned to the
measuring CPU like the time lens's; torch is imported inside the variant's own interpreter. The
loop count is calibrated once, without the profiler. In each generation the variants alternate
profiles of that many loops (block 0 a short warm-up profile: the first profile of a process pays
for the profiler's start-up and cold caches). Every profile's op table is stored as an artifact,
its per-op counts and times and its total self CPU time as samples.

Analysis: the ratio is the total self CPU time of all ops per iteration, variant/baseline, paired
by generation and block with a CI over generations (`stats.paired`). The profiler inflates times,
so that ratio is indicative; the ops that appeared or disappeared, and call counts, are the robust
part (docs/lenses/torch.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from perflab.lenses.torch import DESCRIPTOR
from perflab.lenses.torch.analyse import (
    KIND_OPS,
    KIND_WARMUP_OPS,
    SELF_CPU_US,
    analyse_torch,
    profile_values,
)
from perflab.lenses.torch.metric import TORCH
from perflab.lenses.torch.ops import (
    OpTable,
    OpTableFormatError,
    parse_op_table,
)
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, loops_per_variant
from perflab.measure.worker_client import StatementWorker, WorkerOps
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Artifact, Benchmark, Experiment, Note
from perflab.records.run_facts import VariantInfo
from perflab.stats.family import family_settings

MEASURED_BLOCKS = 2  # profiles per variant and generation, after the warm-up one
MIN_GENERATIONS = 2  # up to --min-generations, as many as its share of the budget holds
# loops of a generation's warm-up profile at most: it pays the profiler's start-up and cold caches,
# and is not what the ratio is computed from
WARMUP_LOOPS = 50
# Every op call becomes a profiler event held in memory until key_averages(), and costs a few µs
# of profiler overhead: more loops than this add little but time and memory.
MAX_LOOPS = 2000


class TorchLens:
    """The torch lens: torch.profiler op tables of each variant's statement, diffed per
    iteration."""

    metric = TORCH

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        for benchmark in experiment.benchmarks:
            _require_statement(benchmark)
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        _require_statement(benchmark)
        _Session(LensSession(benchmark, context, metric=TORCH)).run()

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_torch(benchmark, variants, data, family_settings(experiment))


WORKER_OPS = DESCRIPTOR.worker.handlers or ""  # the source sent to the workers, run there


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


class _Session:
    """Generations of workers, each variant's profiles alternating in blocks."""

    def __init__(self, session: LensSession) -> None:
        self.session = session

    def run(self) -> None:
        # the first block of each generation warms up, on fewer loops
        sampler = InterleavedSampler(self.session, TORCH, warmup_blocks=1)
        self._loops: list[int] | None = None  # per variant, calibrated in the first generation
        generations = max(2, self.session.settings.min_generations)
        self._warm_servers()
        # its share of the budget decides how many beyond two (a CI needs two)
        sampler.generations(
            lambda generation: self._generation(sampler, generation),
            at_least=generations,
            at_most=generations,
            fit_budget_after=MIN_GENERATIONS,
            label="torch.profiler",
        )

    def _generation(self, sampler: InterleavedSampler[LensSession], generation: int) -> None:
        with self.session.generation(ops=(WorkerOps.from_module(WORKER_OPS),)) as workers:
            if self._loops is None:
                target_ns = int(self.session.settings.sample_target_ms * 1e6)
                self._loops = [min(MAX_LOOPS, n) for n in loops_per_variant(workers, target_ns)]
            loops = self._loops
            sampler.blocks(
                lambda slot: self._profile(sampler, workers[slot.variant], loops, slot),
                generation=generation,
                blocks=1 + MEASURED_BLOCKS,
            )

    def _warm_servers(self) -> None:
        """Forked workers: one empty profiler session in each server, so that no generation's
        child pays the profiler's initialisation (seconds a process) in its warm-up
        profile; what the children then profile is the same (the warm-up block stays)."""
        servers = self.session.fork_servers
        if servers is None:
            return
        ops = WorkerOps.from_module(WORKER_OPS)
        for index in range(len(self.session.variants)):
            # a failure is left to the first generation, which reports it with its phase
            servers.server(index).call(ops, {"op": "torch_warm"})

    def _profile(
        self,
        sampler: InterleavedSampler[LensSession],
        worker: StatementWorker,
        loops: list[int],
        slot: Slot,
    ) -> None:
        own = loops[slot.variant]
        table = torch_profile(worker, min(own, WARMUP_LOOPS) if slot.warmup else own)
        self._store(sampler, table, slot)

    def _store(self, sampler: InterleavedSampler[LensSession], table: OpTable, slot: Slot) -> None:
        sink = self.session.context.sink
        variant = self.session.variants[slot.variant].name
        sink.add_artifact(
            Artifact(
                benchmark=self.session.benchmark.name,
                variant=variant,
                metric=TORCH,
                kind=KIND_WARMUP_OPS if slot.warmup else KIND_OPS,
                content=json.dumps(table.to_json()),
                generation=slot.generation,
            )
        )
        # one clock reading for all of the table's samples
        first = sampler.sample(
            slot, SELF_CPU_US, table.self_cpu_us, loops=table.loops, cpu=self.session.context.cpu
        )
        values = profile_values(table)
        for name, value in values:
            sink.add_sample(dataclasses.replace(first, name=name, value=value))
        sink.add_variant_info(
            variant,
            VariantInfo(
                torch={"version": table.torch_version, "cpu_capability": table.cpu_capability}
            ),
        )


# --------------------------------------------------------------------------------------------
# analysing
