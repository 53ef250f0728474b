"""The instructions lens's cost model (lenses/instructions/cost.py): valgrind's processes side
by side on the CPUs other runs leave it, toggled counting cheaper than counting throughout."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.lenses.instructions.cost import FORK_SERVERS, instructions_cost
from perflab.measure.callgrind.workers import MIN_SERVERS
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK


def test_the_instructions_plan_counts_the_cpus_other_runs_leave_it() -> None:
    settings = Settings(budget_s=60)
    two = instructions_cost(QUICK, settings)
    one = instructions_cost(dataclasses.replace(QUICK, counting_cpus=1), settings)
    # two variants, two processes each: side by side on two CPUs, one after another on one
    assert one.minimum_s > 1.5 * two.minimum_s
    assert "1 at once" in one.needs


def test_counting_only_the_loop_costs_less_than_counting_throughout() -> None:
    settings = Settings(budget_s=60)
    toggled = instructions_cost(QUICK, settings)
    throughout = instructions_cost(QUICK, settings, toggled=False)
    assert toggled.minimum_s < throughout.minimum_s


def test_each_forked_child_and_each_of_two_servers_pay_the_set_up_under_valgrind() -> None:
    # torch.compile's set-up (Dynamo imported and traced, the graph loaded) took 46 s of one
    # process under valgrind against 11 s natively: every child of a fork server repeats it
    settings = Settings(budget_s=60)
    one_cpu = dataclasses.replace(QUICK, counting_cpus=1)  # fork servers, variants in turn
    light = instructions_cost(one_cpu, settings)
    heavy = instructions_cost(dataclasses.replace(one_cpu, startup_s=10.0, fork_s=10.0), settings)
    # two servers' start-ups and, beyond each server's first child, no child's set-up (two
    # processes: one a server), 8x native, in each of the two variants counted in turn
    assert heavy.minimum_s - light.minimum_s == pytest.approx(2 * 8 * 2 * (10 - 0.05))
    assert "2 callgrind fork servers per variant" in heavy.needs
    # four processes: the two servers' second children pay the set-up again
    four_light = instructions_cost(one_cpu, settings, processes=4)
    heavy_probe = dataclasses.replace(one_cpu, startup_s=10.0, fork_s=10.0)
    four_heavy = instructions_cost(heavy_probe, settings, processes=4)
    expected = 2 * 8 * (2 * (10 - 0.05) + 2 * (10 - 0.01))
    assert four_heavy.minimum_s - four_light.minimum_s == pytest.approx(expected)


def test_the_plan_prices_as_many_fork_servers_as_the_lens_starts() -> None:
    assert FORK_SERVERS == MIN_SERVERS
