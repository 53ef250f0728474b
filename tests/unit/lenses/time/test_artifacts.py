"""What the time lens stores beside its samples, read back (lenses/time/artifacts.py): the units
of an interval (command batches, server rounds), the runs that shared the CPU, the exit statuses
of failing runs, and each variant's samples as a plot's series."""

from __future__ import annotations

import json

import pytest

from perflab.lenses.time.artifacts import (
    COMMAND_BATCHES,
    KIND_COMMAND_UNITS,
    KIND_EXIT_CODES,
    KIND_SERVER_ROUND,
    KIND_SHARED_CPU,
    WALL_NS,
    command_batch_blocks,
    command_units_of,
    exit_codes_of,
    server_rounds_of,
    shared_cpu_of,
    time_series,
)
from perflab.records.document import TimePoint
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, BenchmarkData, Sample


def artifact(kind: str, content: object, *, variant: str = "A", generation: int = 0) -> Artifact:
    return Artifact("b", variant, Metric.TIME, kind, json.dumps(content), generation)


def test_a_commands_units_are_what_its_run_stored_or_about_ten_batches() -> None:
    stored = BenchmarkData(artifacts=(artifact(KIND_COMMAND_UNITS, {"blocks_per_unit": 7}),))
    assert command_units_of(stored, 100) == 7
    assert command_units_of(BenchmarkData(), 100) == 100 // COMMAND_BATCHES


@pytest.mark.parametrize(
    ("blocks", "per_batch"), [(0, 1), (5, 1), (19, 1), (20, 2), (25, 2), (100, 10)]
)
def test_batches_hold_two_blocks_at_least_once_there_are_enough(
    blocks: int, per_batch: int
) -> None:
    assert command_batch_blocks(blocks) == per_batch


def test_forked_generations_are_read_with_their_server_round() -> None:
    stored = BenchmarkData(
        artifacts=(
            artifact(KIND_SERVER_ROUND, {"round": 0, "servers": [1, 2]}, generation=0),
            artifact(KIND_SERVER_ROUND, {"round": 0, "servers": [1, 2]}, generation=1),
            artifact(KIND_SERVER_ROUND, {"round": 1, "servers": [3, 4]}, generation=2),
            artifact(KIND_SHARED_CPU, {"cpu": 1, "pids": [9]}),
        )
    )
    assert server_rounds_of(stored) == {0: 0, 1: 0, 2: 1}
    assert server_rounds_of(BenchmarkData()) is None  # fresh workers: each generation a unit


def test_the_runs_that_shared_the_cpu_are_every_pid_once_in_order() -> None:
    stored = BenchmarkData(
        artifacts=(
            artifact(KIND_SHARED_CPU, {"cpu": 1, "pids": [42, 7]}),
            artifact(KIND_SHARED_CPU, {"cpu": 1, "pids": [7, 13]}, variant="B"),
        )
    )
    assert shared_cpu_of(stored) == (7, 13, 42)
    assert shared_cpu_of(BenchmarkData()) == ()


def test_each_runs_exit_status_is_zero_but_where_a_failing_run_was_measured() -> None:
    samples = [Sample("b", "A", Metric.TIME, WALL_NS, 1.0, block=b) for b in range(4)]
    stored = BenchmarkData(
        artifacts=(
            artifact(KIND_EXIT_CODES, {"1": 2, "3": 1}),
            artifact(KIND_EXIT_CODES, {"0": 9}, variant="B"),
        )
    )
    assert exit_codes_of(stored, "A", samples) == (0, 2, 0, 1)
    assert exit_codes_of(BenchmarkData(), "A", samples) == (0, 0, 0, 0)


def test_the_plots_series_are_each_variants_wall_time_from_the_first_sample() -> None:
    samples = [
        Sample("b", "A", Metric.TIME, WALL_NS, 2000.0, loops=10, generation=0, at_ns=5 * 10**9),
        Sample("b", "B", Metric.TIME, WALL_NS, 300.0, generation=1, at_ns=7 * 10**9, warmup=True),
        Sample("b", "A", Metric.TIME, "cpu_ns", 1.0, at_ns=0),  # not a wall time: left out
    ]
    baseline, other = time_series(samples, ["A", "B"])
    assert (baseline.label, baseline.index) == ("A (baseline)", 0)
    assert baseline.points == (TimePoint(0.0, 200.0, 0, False),)
    assert (other.label, other.points) == ("B", (TimePoint(2.0, 300.0, 1, True),))
    assert time_series([], ["A"])[0].points == ()
