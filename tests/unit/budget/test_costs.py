"""What a lens's minimum measurement costs (budget/costs.py): the probe's figures and when its
workers fork, joined with recent probes; how many fork servers a variant's callgrind processes
come from; costs learned from recent runs; a lens without a model; a lens made of others'
measurements."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.costs import (
    ANALYSIS_S,
    FORK_SERVERS,
    FORK_WHEN_IMPORTS_S,
    LEARNED_RANGE,
    TWO_SERVERS_MAX_START_S,
    CostPart,
    CostProbe,
    LensCost,
    analysis_s,
    composed_cost,
    default_cost,
    fork_servers_for,
    learned_costs,
    side_by_side_s,
)
from perflab.budget.machine_speed import RECENT_PROBES
from perflab.lenses.registry import lens_option
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK


def test_workers_fork_when_the_variants_imports_are_expensive_and_no_gpu_is_set_up() -> None:
    assert not QUICK.fork
    assert (QUICK.worker_start_s, QUICK.once_s) == (QUICK.startup_s, 0.0)
    heavy = dataclasses.replace(QUICK, startup_s=2.1, import_s=FORK_WHEN_IMPORTS_S / 2)
    assert heavy.fork  # two variants' imports: FORK_WHEN_IMPORTS_S a generation
    assert heavy.worker_start_s == heavy.fork_s and heavy.once_s == pytest.approx(2 * 2.1)
    assert not dataclasses.replace(heavy, device_runtimes=("cuda",)).fork
    assert not dataclasses.replace(heavy, kind=BenchmarkKind.COMMAND).fork


def test_a_probe_joins_the_medians_of_recent_probes_of_its_benchmark() -> None:
    recent = [dataclasses.replace(QUICK, startup_s=s) for s in (0.07, 0.09, 0.5, 0.06, 0.08)]
    failed = dataclasses.replace(QUICK, startup_s=9.0, failed=True)
    joined = QUICK.with_recent([*recent, failed])
    assert joined.recent == RECENT_PROBES  # the last few; a failed probe left out
    assert joined.startup_s == pytest.approx(0.08)  # of its own 0.05 and 0.09, 0.5, 0.06, 0.08
    assert "median with four recent probes" in joined.recent_words()
    assert QUICK.recent_words() == "" and QUICK.with_recent([]) == QUICK
    assert dataclasses.replace(QUICK, failed=True).with_recent(recent).recent == 0


def test_the_cpus_to_count_on_are_the_lower_median_with_recent_probes() -> None:
    probe = dataclasses.replace(QUICK, counting_cpus=4)
    assert probe.with_recent_cpus([1, 1, 4]).counting_cpus == 1
    assert probe.with_recent_cpus([]).counting_cpus == 4


def test_a_fixed_cost_learns_from_recent_runs_within_its_range_and_a_sampling_one_not() -> None:
    fixed = LensCost(Metric.INSTRUCTIONS, minimum_s=10.0, needs="a count", once_s=1.0)
    elastic = LensCost(Metric.TIME, minimum_s=5.0, needs="samples", elastic=True)
    slower, sampled = learned_costs(
        [fixed, elastic], {fixed.metric: (2.0, 2.0), elastic.metric: (3.0,)}
    )
    assert slower.learned == pytest.approx(2.0) and slower.minimum_s == pytest.approx(20.0)
    assert slower.once_s == pytest.approx(2.0)
    assert slower.needs == "a count, x2.00 as its recent runs here took"
    assert sampled == elastic
    (capped,) = learned_costs([fixed], {fixed.metric: (50.0, 50.0, 50.0)})
    assert capped.learned == LEARNED_RANGE[1]
    assert learned_costs([fixed], {}) == [fixed]


def test_a_lens_without_a_model_costs_one_generation() -> None:
    cost = default_cost(Metric("new"), QUICK, Settings())
    assert cost.minimum_s == pytest.approx(2 * (QUICK.startup_s + 1.0))
    assert cost.after_s == pytest.approx(analysis_s(QUICK, ANALYSIS_S)) == pytest.approx(0.1)
    command = dataclasses.replace(QUICK, kind=BenchmarkKind.COMMAND, sample_s=0.3)
    assert default_cost(Metric("new"), command, Settings()).minimum_s == pytest.approx(2 * 1.3)


def test_jobs_side_by_side_take_their_share_of_a_loaded_machine() -> None:
    assert side_by_side_s(1.0, 2, 2, 0.5) == pytest.approx(0.5)  # quiet: one round
    assert side_by_side_s(1.0, 4, 2, 1.0) == pytest.approx(2.0)  # two rounds
    # loaded (one job 5x slower): two jobs on one CPU take 6x one job, not 10x
    assert side_by_side_s(1.0, 2, 1, 5.0) == pytest.approx(6.0)
    assert side_by_side_s(1.0, 1, 0, 1.0) == pytest.approx(1.0)  # no CPU counted: one


def test_a_composed_cost_adds_its_parts_each_priced_by_its_own_model() -> None:
    seen: list[tuple[int, bool]] = []

    def counted(probe: CostProbe, settings: Settings) -> LensCost:
        seen.append((probe.variants, lens_option(settings, "cache_sim")))
        return LensCost(Metric.INSTRUCTIONS, minimum_s=2.0, needs="a count", after_s=0.5)

    models = {Metric.INSTRUCTIONS: counted, Metric.TIME: None}
    parts = (
        CostPart(Metric.INSTRUCTIONS, per_variant=True, settings=(("cache_sim", True),)),
        CostPart(Metric.TIME),  # no model of its own: the default
    )
    model = composed_cost(Metric("memory"), parts, models.__getitem__)
    cost = model(QUICK, Settings())
    default = default_cost(Metric.TIME, QUICK, Settings())
    assert seen == [(1, True)]
    assert cost.metric == Metric("memory")
    assert cost.minimum_s == pytest.approx(QUICK.variants * 2.0 + default.minimum_s)
    assert cost.after_s == pytest.approx(QUICK.variants * 0.5 + default.after_s)
    assert cost.needs == "a count per variant, one after another, then one generation"


def test_two_fork_servers_only_where_the_first_starts_quickly_under_valgrind() -> None:
    # numpy's or an asv adapter's start under callgrind (1-3 s): the guard is cheap
    assert fork_servers_for(2.5) == FORK_SERVERS == 2
    assert fork_servers_for(TWO_SERVERS_MAX_START_S) == 2
    # `import torch` under callgrind (~9 s): one server, its start paid once
    assert fork_servers_for(9.4) == 1
