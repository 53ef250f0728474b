"""What the time lens stores beside its wall-time samples, and reading it back. The artifacts say
how a benchmark's samples group into the units of an interval (command batches, server rounds),
which other runs shared the measuring CPU, and the exit statuses of failing runs; read back, they
also give every variant's samples as a scatter plot's series."""

from __future__ import annotations

import json
from collections.abc import Sequence

from perflab.measure.lens import BenchmarkData
from perflab.records.document import TimePoint, TimeSeries
from perflab.records.model import Sample

WALL_NS = "wall_ns"
# artifact (baseline variant, per generation): {"round": R, "servers": [pids]} when the
# generation's workers were forked from round R's servers; the interval is then over rounds
KIND_SERVER_ROUND = "time-server-round"
COMMAND_BATCHES = 10  # commands, runs stored without a unit artifact: about this many batches
# artifact (baseline variant): {"blocks_per_unit": B}, the command batch size the run used
KIND_COMMAND_UNITS = "time-command-units"
# artifact (baseline variant): {"cpu": N, "pids": [...]}, the other perflab runs that held the
# measuring CPU when this benchmark's time was measured (stats.overload: treated as overload)
KIND_SHARED_CPU = "time-shared-cpu"
# artifact (per variant, --ignore-failure): {"BLOCK": STATUS}, the runs that exited non-zero
# and were measured anyway; the others exited 0 (hyperfine's exit_codes)
KIND_EXIT_CODES = "time-exit-codes"


def command_units_of(data: BenchmarkData, measured_blocks: int) -> int:
    """The blocks per unit a stored command run used (its artifact); runs stored before the
    artifact existed were batched into about COMMAND_BATCHES batches."""
    for artifact in data.artifacts:
        if artifact.kind == KIND_COMMAND_UNITS:
            return int(json.loads(artifact.content)["blocks_per_unit"])
    return command_batch_blocks(measured_blocks)


def exit_codes_of(data: BenchmarkData, variant: str, samples: list[Sample]) -> tuple[int, ...]:
    """Each sample's run's exit status: 0, but where --ignore-failure measured a failing one."""
    failed: dict[int, int] = {}
    for artifact in data.artifacts:
        if artifact.kind == KIND_EXIT_CODES and artifact.variant == variant:
            failed.update({int(b): int(c) for b, c in json.loads(artifact.content).items()})
    return tuple(failed.get(s.block, 0) for s in samples)


def shared_cpu_of(data: BenchmarkData) -> tuple[int, ...]:
    """The other perflab runs that held the measuring CPU while this benchmark was measured."""
    pids: set[int] = set()
    for artifact in data.artifacts:
        if artifact.kind == KIND_SHARED_CPU:
            pids.update(int(pid) for pid in json.loads(artifact.content)["pids"])
    return tuple(sorted(pids))


def command_batch_blocks(measured_blocks: int) -> int:
    """Commands stored without a unit artifact: consecutive blocks grouped into about ten
    batches, re-formed as blocks arrive (a unit that changes cannot carry a confidence
    sequence, hence the artifact). Once there are enough blocks, a batch holds at least two."""
    if measured_blocks < 2 * COMMAND_BATCHES:
        return max(1, measured_blocks // COMMAND_BATCHES)
    return max(2, measured_blocks // COMMAND_BATCHES)


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
