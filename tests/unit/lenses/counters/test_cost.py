"""The counters lens's cost model (lenses/counters/cost.py): fresh workers under perf stat for
two generations of ten blocks, or a command's runs block by block."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.perf_costs import PERF_START_S
from perflab.lenses.counters.cost import counters_cost
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK

SUBJECT = "perflab.lenses.counters.cost"


def test_a_statement_costs_two_generations_of_workers_under_perf_stat() -> None:
    settings = Settings(warmup_blocks=1, min_generations=1)
    cost = counters_cost(QUICK, settings)
    generation_s = 2 * (QUICK.startup_s + PERF_START_S) + 11 * 2 * QUICK.sample_s
    assert cost.minimum_s == pytest.approx(2 * generation_s)
    assert cost.overshoot_s == pytest.approx(generation_s)  # it stops between generations
    assert cost.metric == Metric.COUNTERS and cost.elastic
    assert cost.needs == "2 generations of 2 workers under perf stat"
    more = counters_cost(QUICK, dataclasses.replace(settings, min_generations=5))
    assert more.minimum_s == pytest.approx(5 * generation_s)


def test_a_command_costs_its_blocks_of_runs_under_perf_stat() -> None:
    command = dataclasses.replace(QUICK, kind=BenchmarkKind.COMMAND, startup_s=0.0, sample_s=0.5)
    cost = counters_cost(command, Settings(warmup_blocks=1, min_generations=2))
    run_s = 0.5 + PERF_START_S
    assert cost.minimum_s == pytest.approx(3 * 2 * run_s)
    assert cost.overshoot_s == pytest.approx(2 * run_s)
    assert cost.needs == "3 blocks of 2 runs under perf stat"
    one = counters_cost(command, Settings(warmup_blocks=0, min_generations=1))
    assert one.needs == "2 blocks of 2 runs under perf stat"
