"""The instructions lens's cost model (lenses/instructions/cost.py): valgrind's processes side
by side on the CPUs other runs leave it, toggled counting cheaper than counting throughout."""

from __future__ import annotations

import dataclasses

from perflab.lenses.instructions.cost import instructions_cost
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
