"""The instructions lens's cost model (lenses/instructions/cost.py): valgrind's processes side
by side on the CPUs other runs leave it, toggled counting cheaper than counting throughout; two
fork servers a variant where a server's priced start under valgrind is short, else one."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.costs import TWO_SERVERS_MAX_START_S, VALGRIND_SETUP_SLOWDOWN
from perflab.lenses.instructions.cost import (
    CALLGRIND_TOGGLED_COUNTED_S,
    VALGRIND_START_S,
    instructions_cost,
)
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
    light = instructions_cost(one_cpu, settings, processes=4)
    # a set-up that runs long in each child, on a server that starts quickly: two servers,
    # whose second children pay the set-up again, 8x native, in each of two variants in turn
    heavy = instructions_cost(dataclasses.replace(one_cpu, fork_s=0.5), settings, processes=4)
    assert heavy.minimum_s - light.minimum_s == pytest.approx(2 * 8 * 2 * (0.5 - 0.01))
    assert "2 callgrind fork servers per variant" in heavy.needs


def test_a_server_that_starts_slowly_under_valgrind_is_the_variant_s_only_one() -> None:
    settings = Settings(budget_s=60)
    one_cpu = dataclasses.replace(QUICK, counting_cpus=1)
    valgrind = one_cpu.speed.valgrind_factor
    # priced start: valgrind's own and 8x the interpreter's native start-up with the imports
    quick_start_s = VALGRIND_START_S * valgrind + VALGRIND_SETUP_SLOWDOWN * one_cpu.startup_s
    assert quick_start_s <= TWO_SERVERS_MAX_START_S
    assert "2 callgrind fork servers" in instructions_cost(one_cpu, settings).needs
    # `import torch`: 2 s natively, ~17 s under valgrind: a second server would cost that again
    torch = dataclasses.replace(one_cpu, startup_s=2.0, fork_s=0.05)
    slow = instructions_cost(torch, settings)
    assert "1 callgrind fork server per variant" in slow.needs
    start_s = VALGRIND_START_S * valgrind + VALGRIND_SETUP_SLOWDOWN * 2.0
    counted_s = CALLGRIND_TOGGLED_COUNTED_S * valgrind
    # one server, its second child's set-up under valgrind, two variants in turn
    per_variant = start_s + 2 * counted_s + VALGRIND_SETUP_SLOWDOWN * 0.05
    assert slow.minimum_s == pytest.approx(2 * per_variant)
