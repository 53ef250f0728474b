"""`--budget` as a budget: how a benchmark's budget is split between its lenses before anything
is measured. Pure: a probe's figures and the lenses' minimum costs in, a plan out.

A user reads `--budget 10` as "this benchmark takes 10 s". The engine probes the benchmark (one
worker's start-up, the part of it spent importing the set-up's modules, one calibrated sample),
asks each lens's cost model (`CostModel`, in the lens's package, given by its descriptor) what
its minimum measurement costs (`LensCost`), and splits the budget: lenses with a fixed cost
(callgrind, one profile) get that cost, and the lenses that sample until their budget is used
(time, counters) share the rest, each at least its minimum. The budget is a target, not a wall:
when the minimums do not fit, every lens still measures its minimum and the run ends with a
warning that says what took longer and why; only `--strict-budget` refuses before starting, with
the budget that would fit.

The cost models' tool constants are those of a reference machine (2-vCPU VMs, quiet;
docs/benchmarks.md, "The budget"), and a loaded machine takes several times them. So the probe
also times a small known reference here and now (a Python process doing fixed work and, when a
lens runs valgrind, valgrind starting an interpreter), and every tool constant is scaled by how
much slower than on the reference machine that took (`MachineSpeed`); the plan's note says what
was measured and the factor used. What runs after measuring (each lens's analysis, the report)
is counted in the plan too, and kept out of the lenses' shares. The engine corrects the
estimates while measuring: lenses with a fixed cost run first, and each sampling lens's share is
recomputed from the time actually left.

Its modules, lowest first: machine_speed.py (the reference runs and the factor), costs.py (the
probe's figures and each lens's cost), plan.py (the split, and what it says), perf_costs.py
(perf's figures, which three lenses' cost models and measure/perf/ share). The names other
packages use are imported here.
"""

from perflab.budget.costs import (
    CostModel,
    CostPart,
    CostProbe,
    LensCost,
    ServerRounds,
    analysis_s,
    composed_cost,
    default_cost,
    learned_costs,
    lens_costs,
    side_by_side_s,
)
from perflab.budget.machine_speed import MachineSpeed
from perflab.budget.plan import (
    BudgetError,
    BudgetPlan,
    LensShare,
    charge_once,
    elastic_share,
    plan_budget,
)

__all__ = [
    "BudgetError",
    "BudgetPlan",
    "CostModel",
    "CostPart",
    "CostProbe",
    "LensCost",
    "LensShare",
    "MachineSpeed",
    "ServerRounds",
    "analysis_s",
    "charge_once",
    "composed_cost",
    "default_cost",
    "elastic_share",
    "learned_costs",
    "lens_costs",
    "plan_budget",
    "side_by_side_s",
]
