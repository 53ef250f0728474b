"""The time lens's units for an interaction (lenses.time.interaction.paired_units): each unit's
mean log ratio, over generations, command batches or server rounds as the run stored them."""

from __future__ import annotations

import json
import math

import pytest

from perflab.lenses.time.artifacts import KIND_COMMAND_UNITS, KIND_SERVER_ROUND
from perflab.lenses.time.interaction import paired_units
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Sample
from perflab.stats.preemption import Preemption

STATEMENT = Benchmark(name="b", stmt="pass")
COMMAND = Benchmark(name="b", cmd="true")


def sample(
    variant: str, value: float, generation: int, block: int, *, run_queue_ns: int | None = None
) -> Sample:
    return Sample(
        "b",
        variant,
        Metric.TIME,
        "wall_ns",
        value,
        generation=generation,
        block=block,
        run_queue_ns=run_queue_ns,
        cpu_ns=None if run_queue_ns is None else int(value) - run_queue_ns,
    )


def data(ratios: dict[tuple[int, int], float], *artifacts: Artifact) -> BenchmarkData:
    """(generation, block) -> B's ratio to A's 100 ns."""
    samples = [sample("A", 100.0, g, b) for g, b in ratios] + [
        sample("B", 100.0 * r, g, b) for (g, b), r in ratios.items()
    ]
    return BenchmarkData(samples=tuple(samples), artifacts=artifacts)


def artifact(kind: str, content: dict[str, object], generation: int = 0) -> Artifact:
    return Artifact("b", "A", Metric.TIME, kind, json.dumps(content), generation=generation)


def test_a_statements_units_are_its_generations_medians() -> None:
    stored = data({(0, 0): 1.1, (0, 1): 1.2, (0, 2): 1.9, (1, 0): 0.9})
    units = paired_units(STATEMENT, stored, "A", "B", Preemption.KEEP)
    assert units == pytest.approx({0: math.log(1.2), 1: math.log(0.9)})


def test_forked_generations_average_into_their_server_rounds() -> None:
    stored = data(
        {(0, 0): 1.1, (1, 0): 1.3, (2, 0): 2.0},
        artifact(KIND_SERVER_ROUND, {"round": 0, "servers": [1]}, generation=0),
        artifact(KIND_SERVER_ROUND, {"round": 0, "servers": [1]}, generation=1),
        artifact(KIND_SERVER_ROUND, {"round": 1, "servers": [2]}, generation=2),
    )
    units = paired_units(STATEMENT, stored, "A", "B", Preemption.KEEP)
    assert units == pytest.approx({0: (math.log(1.1) + math.log(1.3)) / 2, 1: math.log(2.0)})


def test_a_commands_units_are_the_batches_its_run_stored() -> None:
    # every run is a generation of its own; two blocks to a batch
    stored = data(
        {(b, b): r for b, r in enumerate([1.1, 1.3, 2.0, 2.0])},
        artifact(KIND_COMMAND_UNITS, {"blocks_per_unit": 2}),
    )
    units = paired_units(COMMAND, stored, "A", "B", Preemption.KEEP)
    assert list(units.values()) == pytest.approx(
        [(math.log(1.1) + math.log(1.3)) / 2, math.log(2.0)]
    )


def test_the_preemption_policy_decides_which_pairs_count() -> None:
    stored = BenchmarkData(
        samples=(
            sample("A", 100.0, 0, 0, run_queue_ns=0),
            sample("B", 110.0, 0, 0, run_queue_ns=0),
            sample("A", 100.0, 0, 1, run_queue_ns=0),
            sample("B", 300.0, 0, 1, run_queue_ns=200),  # preempted
        )
    )
    kept = paired_units(STATEMENT, stored, "A", "B", Preemption.KEEP)
    excluded = paired_units(STATEMENT, stored, "A", "B", Preemption.EXCLUDE)
    assert kept[0] == pytest.approx((math.log(1.1) + math.log(3.0)) / 2)
    assert excluded == pytest.approx({0: math.log(1.1)})
