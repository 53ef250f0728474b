"""The budget's plan (perflab/budget.py) from a fake probe: shares, refusals, forking."""

from __future__ import annotations

import dataclasses
import os

import pytest

from perflab.budget import (
    BudgetError,
    CostProbe,
    LensCost,
    elastic_share,
    lens_costs,
    plan_budget,
)
from perflab.lenses.registry import descriptor_for
from perflab.model import BenchmarkKind, Metric, Settings

QUICK = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=0.05,
    import_s=0.01,
    fork_s=0.01,
    sample_s=0.01,
    probe_s=0.2,
)
TORCH = dataclasses.replace(QUICK, startup_s=2.1, import_s=2.0, fork_s=0.05)


def _costs(probe: CostProbe, settings: Settings, *metrics: Metric) -> list[LensCost]:
    return lens_costs(probe, settings, {m: descriptor_for(m).cost for m in metrics})


def test_the_time_lens_alone_gets_the_whole_budget_but_the_probe() -> None:
    settings = Settings(budget_s=10)
    plan = plan_budget(10, QUICK, _costs(QUICK, settings, Metric.TIME))
    assert plan.fits
    assert plan.share_of(Metric.TIME).share_s == pytest.approx(10 - QUICK.probe_s)
    assert plan.eta_s == 10
    assert "time 9.8 s" in plan.describe()


def test_fixed_costs_come_first_and_sampling_lenses_share_the_rest_by_weight() -> None:
    settings = Settings(budget_s=60)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS, Metric.COUNTERS)
    plan = plan_budget(60, QUICK, costs)
    instructions = plan.share_of(Metric.INSTRUCTIONS)
    assert not instructions.cost.elastic
    assert instructions.share_s == instructions.cost.minimum_s
    time, counters = plan.share_of(Metric.TIME), plan.share_of(Metric.COUNTERS)
    assert time.cost.elastic and counters.cost.elastic
    total = QUICK.probe_s + sum(s.share_s for s in plan.shares)
    assert total == pytest.approx(60)
    surplus_time = time.share_s - time.cost.minimum_s
    surplus_counters = counters.share_s - counters.cost.minimum_s
    assert surplus_time == pytest.approx(3 * surplus_counters)  # weights 3:1


def test_a_budget_too_small_is_refused_with_the_budget_that_fits() -> None:
    settings = Settings(budget_s=2)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    with pytest.raises(BudgetError) as refused:
        plan_budget(2, QUICK, costs)
    error = refused.value
    assert error.exit_code == 2
    assert "the instructions lens alone needs" in error.message
    needed = QUICK.probe_s + sum(c.minimum_s for c in costs)
    assert f"--budget {int(needed * 1.1) + 1} would fit" in error.message
    assert error.hint is not None
    assert "--min-measurements-anyway" in error.hint and "--metric" in error.hint
    assert error.detail is not None and "time:" in error.detail


def test_anyway_gives_each_lens_its_minimum() -> None:
    settings = Settings(budget_s=2, min_measurements_anyway=True)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    plan = plan_budget(2, QUICK, costs, anyway=True)
    assert not plan.fits
    assert plan.eta_s == pytest.approx(plan.needed_s) and plan.eta_s > 2
    for share in plan.shares:
        assert share.share_s == pytest.approx(share.cost.minimum_s)
    assert "the minimums need" in plan.describe()


def test_an_expensive_import_forks_the_torch_lens_only() -> None:
    settings = Settings()
    assert not QUICK.fork and TORCH.fork
    time_cost, torch_cost = _costs(TORCH, settings, Metric.TIME, Metric.TORCH)
    # the time lens keeps fresh workers: 2 x 2.1 s in each of 6 generations, sampled as long;
    # where another CPU starts each generation while the previous one measures, the start-up
    # is paid once on top
    assert not time_cost.forked and "fresh" in time_cost.needs
    started_ahead = len(os.sched_getaffinity(0)) > 1
    assert time_cost.minimum_s > (6 + 1) * (2 * 2.1) if started_ahead else 6 * 2 * (2 * 2.1)
    # the torch lens forks: its servers' imports once, then 2 generations of cheap children
    assert torch_cost.forked and torch_cost.once_s == pytest.approx(2 * 2.1)
    assert torch_cost.minimum_s < 2 * 2.1 + 2 * 2 * 1.0
    plan = plan_budget(
        200, TORCH, _costs(TORCH, settings, Metric.TIME, Metric.TORCH, Metric.COUNTERS)
    )
    assert plan.fits and "; torch forks its workers" in plan.describe()


def test_commands_cost_their_runs() -> None:
    probe = CostProbe(BenchmarkKind.COMMAND, 2, 0.0, 0.0, 0.0, sample_s=0.5, probe_s=0.5)
    cost = _costs(probe, Settings(), Metric.TIME)[0]
    assert cost.minimum_s == pytest.approx((2 + 6) * 2 * 0.5)  # warm-up + 6 blocks of 2 runs
    assert not probe.fork


def test_a_lens_without_a_cost_model_gets_one_generation() -> None:
    costs = lens_costs(QUICK, Settings(), {Metric("custom"): None})
    assert costs[0].minimum_s == pytest.approx(2 * (0.05 + 1.0)) and not costs[0].elastic


def test_an_elastic_share_comes_from_the_time_really_left() -> None:
    settings = Settings(budget_s=30)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.COUNTERS, Metric.PROFILE)
    plan = plan_budget(30, QUICK, costs)
    profile = plan.share_of(Metric.PROFILE).cost.minimum_s
    time_cost = plan.share_of(Metric.TIME).cost
    counters = plan.share_of(Metric.COUNTERS).cost
    # the profile lens (fixed) is still to run: its estimate is kept for it
    left = 20.0
    share = elastic_share(plan, Metric.TIME, left, [Metric.TIME, Metric.COUNTERS, Metric.PROFILE])
    free = left - profile - time_cost.minimum_s - counters.minimum_s
    expected = time_cost.minimum_s + free * 3 / 4 - time_cost.overshoot_s / 2
    assert share == pytest.approx(expected)
    # the last lens gets all that is left (less half a step)
    last = elastic_share(plan, Metric.COUNTERS, 10.0, [Metric.COUNTERS])
    assert last == pytest.approx(10.0 - counters.overshoot_s / 2)
    # late (the fixed lenses took longer than planned): the minimum, no more
    late = elastic_share(plan, Metric.COUNTERS, -3.0, [Metric.COUNTERS])
    assert late == pytest.approx(counters.minimum_s - counters.overshoot_s / 2)


def test_the_torch_lens_takes_as_many_generations_as_its_share_holds() -> None:
    from perflab.lenses.torch.measure import TorchLens
    from perflab.measure.scripted_worker import ScriptedWorker
    from perflab.proc import FakeRunner
    from tests.conftest import FAST
    from tests.unit.test_measuring_loops import BENCH, FakeClock, _context, _ns_per_loop
    from tests.unit.test_measuring_loops import _torch_profile as torch_profile

    settings = dataclasses.replace(FAST, metrics=(Metric.TORCH,), min_generations=5)
    for share_s, generations in ((0.0, 2), (100.0, 5)):
        worker = ScriptedWorker(_ns_per_loop, handlers={"torch_profile": torch_profile})
        context, _ = _context(FakeRunner().on_spawn("statement_worker", worker), settings)
        context = dataclasses.replace(context, budget_s=share_s)
        TorchLens(clock_ns=FakeClock()).measure(BENCH, context)
        assert worker.started == 2 * generations


def test_a_forked_lens_share_leaves_out_its_servers_started_before_it() -> None:
    settings = Settings(budget_s=30)
    plan = plan_budget(30, TORCH, _costs(TORCH, settings, Metric.TORCH))
    cost = plan.share_of(Metric.TORCH).cost
    assert cost.forked and cost.started_before_s == pytest.approx(2 * 2.1)
    # the servers took their 4.2 s before the lens: what is left is the lens's own
    share = elastic_share(plan, Metric.TORCH, 10.0, [Metric.TORCH])
    assert share == pytest.approx(10.0 - cost.overshoot_s / 2)
    late = elastic_share(plan, Metric.TORCH, 0.0, [Metric.TORCH])
    assert late == pytest.approx(cost.minimum_s - cost.once_s - cost.overshoot_s / 2)
