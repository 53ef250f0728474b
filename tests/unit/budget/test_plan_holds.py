"""Plans that hold on a loaded machine: what a time-lens generation costs besides its samples,
and the share a sampling lens gets once the lenses before it overran."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.costs import CostProbe
from perflab.budget.machine_speed import REFERENCE_S, MachineSpeed
from perflab.budget.plan import elastic_share, plan_budget
from perflab.lenses.rss.cost import rss_cost
from perflab.lenses.time.cost import TIME_GENERATION_CLOSE_S, time_cost
from perflab.records.kinds import Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK


def _at(speed: MachineSpeed) -> CostProbe:
    return dataclasses.replace(QUICK, speed=speed)


def test_every_time_generation_pays_for_closing_its_workers() -> None:
    settings = Settings()
    quiet = time_cost(_at(MachineSpeed(REFERENCE_S)), settings)
    slow = time_cost(_at(MachineSpeed(3 * REFERENCE_S)), settings)
    closing_s = settings.min_generations * 2 * TIME_GENERATION_CLOSE_S
    assert slow.minimum_s - quiet.minimum_s == pytest.approx(closing_s * (3 - 1))


def test_a_sampling_lens_after_an_overrun_is_given_its_minimum() -> None:
    """The lenses before it took all the time: the time lens measures its minimum, and is given
    that (what it will take), not less."""
    settings = Settings(budget_s=30)
    costs = [rss_cost(QUICK, settings), time_cost(QUICK, settings)]
    plan = plan_budget(30, QUICK, costs)
    minimum_s = plan.share_of(Metric.TIME).cost.minimum_s
    assert elastic_share(plan, Metric.TIME, 0.0, [Metric.TIME]) == pytest.approx(minimum_s)
    # with room, its share grows with what is left
    roomy = elastic_share(plan, Metric.TIME, 20.0, [Metric.TIME])
    assert roomy > minimum_s
