"""A benchmark's plan (engine/benchmark_plan.py): the lenses that measure it, which variants are
probed only once prepared, the machine speeds a process's runs share, the plan shown where
progress can show it, and the native runs started beside the first benchmark's probe only. The
planner's probes and recent ones are engine/prepare/test_recent_probes.py's."""

from __future__ import annotations

import dataclasses
from typing import Any

from perflab.budget.costs import CostProbe, LensCost
from perflab.budget.machine_speed import MachineSpeed
from perflab.budget.plan import BudgetPlan, plan_budget
from perflab.engine.benchmark_plan import (
    SPEED_REUSE_S,
    BenchmarkPlanner,
    SpeedsMeasured,
    by_its_lenses,
    needs_preparation,
    plans_before_run,
    show_plan,
)
from perflab.engine.prepare.caches import IsolatedCaches, NativeRunsAhead
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import NullProgress
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fast_settings import FAST

SUBJECT = "perflab.engine.benchmark_plan"

PROBE = CostProbe(BenchmarkKind.STATEMENT, 2, 0.05, 0.01, 0.01, 0.01, 0.2)


def test_a_benchmark_is_planned_with_the_runs_lenses_that_measure_it() -> None:
    settings = dataclasses.replace(FAST, metrics=(Metric.TIME, Metric("rss")))
    experiment = Experiment(benchmarks=(), variants=(Variant("A"),), settings=settings)
    assert by_its_lenses(experiment, Benchmark("b", stmt="f()")) is experiment
    peak = Benchmark("p", stmt="f()", measured_by=(Metric("rss"),))
    assert by_its_lenses(experiment, peak).settings.metrics == (Metric("rss"),)


def test_a_variant_checked_out_or_built_first_needs_preparation() -> None:
    assert needs_preparation(Variant("A", git="main"))
    assert needs_preparation(Variant("A", build="make"))
    assert not needs_preparation(Variant("A", python="/envs/a/bin/python", env={"X": "1"}))


def test_a_speed_measured_lately_on_the_cpu_is_reused_valgrinds_only_where_asked() -> None:
    speeds = SpeedsMeasured()
    plain, with_valgrind = (
        MachineSpeed(reference_s=0.1),
        MachineSpeed(reference_s=0.1, valgrind_s=1.0),
    )
    speeds.measured(3, False, plain, now_s=100.0)
    assert speeds.lately(3, valgrind=False, now_s=101.0) is plain
    # valgrind's reference was not measured; another CPU's speed is not this one's
    assert speeds.lately(3, valgrind=True, now_s=101.0) is None
    assert speeds.lately(2, valgrind=False, now_s=101.0) is None
    speeds.measured(3, True, with_valgrind, now_s=102.0)
    assert speeds.lately(3, valgrind=True, now_s=103.0) is with_valgrind
    assert speeds.lately(3, valgrind=False, now_s=103.0) is plain  # the plain one first
    # a speed older than SPEED_REUSE_S is measured again
    assert speeds.lately(3, valgrind=False, now_s=102.0 + SPEED_REUSE_S + 1) is None


def test_a_plan_is_shown_only_where_progress_shows_plans() -> None:
    plan = plan_budget(10, PROBE, [LensCost(Metric.TIME, 1.0, "samples", elastic=True)])
    shown: list[tuple[str, str, float]] = []

    class Plans:
        def update(self, **_: object) -> None:
            pass

        def plan(self, *, benchmark: str, text: str, eta_s: float) -> None:
            shown.append((benchmark, text, eta_s))

    show_plan(NullProgress(), "b", plan)
    show_plan(Plans(), "b", plan)
    assert shown == [("b", plan.describe(), plan.eta_s)]


class _Planner(BenchmarkPlanner):
    """Plans without probing: records which benchmarks were given work beside their probe."""

    def __init__(self) -> None:
        super().__init__(FakeRunner(), "/usr/bin/python3", 0)
        self.beside: dict[str, bool] = {}

    def plan(self, benchmark: Benchmark, experiment: Experiment, **kwargs: Any) -> BudgetPlan:
        self.beside[benchmark.name] = kwargs.get("beside") is not None
        return plan_budget(10, PROBE, [LensCost(Metric.TIME, 1.0, "samples", elastic=True)])


def test_only_the_first_benchmark_s_other_variants_run_natively_beside_its_probe() -> None:
    # a later benchmark's would still run while the first ones are measured
    benchmarks = (Benchmark("one", stmt="f()"), Benchmark("two", stmt="g()"))
    experiment = Experiment(benchmarks, (Variant("A"), Variant("B")), FAST)
    planner = _Planner()
    ahead = NativeRunsAhead(FakeRunner(), "/usr/bin/python3", timeout_s=60.0)
    with IsolatedCaches(enabled=False) as caches:
        plans_before_run(experiment, planner, caches, None, 0.0, ahead=ahead)
    assert planner.beside == {"one": True, "two": False}
    # a variant checked out first is not ready to run beside a probe: nothing is
    alone = Experiment(benchmarks[:1], (Variant("A"), Variant("B", git="main")), FAST)
    with IsolatedCaches(enabled=False) as caches:
        plans_before_run(alone, planner, caches, None, 0.0, ahead=ahead)
    assert planner.beside == {"one": False, "two": False}
