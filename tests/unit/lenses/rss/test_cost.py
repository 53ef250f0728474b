"""The rss lens's cost model (lenses/rss/cost.py): fresh workers sampling their loop plain and
under tracemalloc, or a command's runs, in at least two generations."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.lenses.rss.cost import RSS_BLOCKS, RSS_TRACED_SLOWDOWN, rss_cost
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK


def test_the_rss_lens_pays_for_its_loops_under_tracemalloc() -> None:
    # each worker samples the loop plain and under tracemalloc in two blocks: at 10 ms a
    # sample, sum(range(1000))'s six generations of two workers took 6.4 s, not 1 s
    rss = rss_cost(QUICK, Settings())
    per_worker_s = QUICK.startup_s + RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * 0.01
    assert rss.minimum_s == pytest.approx(6 * 2 * per_worker_s)
    assert rss.minimum_s > 5.0
    assert rss.metric == Metric("rss") and rss.needs == "6 generations of 2 workers"
    assert not rss.elastic


def test_workers_are_fresh_even_where_others_fork() -> None:
    # a forked child's peak RSS would include its server's pages
    heavy = dataclasses.replace(QUICK, startup_s=2.1, import_s=2.0)
    assert heavy.fork
    per_worker_s = heavy.startup_s + RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * 0.01
    assert rss_cost(heavy, Settings()).minimum_s == pytest.approx(6 * 2 * per_worker_s)


def test_a_command_costs_three_runs_a_generation_and_generations_are_two_at_least() -> None:
    command = dataclasses.replace(QUICK, kind=BenchmarkKind.COMMAND, startup_s=0.0, sample_s=0.5)
    two = rss_cost(command, Settings(min_generations=1))
    assert two.minimum_s == pytest.approx(2 * 2 * 3 * 0.5)
    assert two.needs == "2 generations of 2 workers"
