"""A benchmark's plan: it is probed, and its budget split between the lenses (budget/plan.py)
before anything is measured; a benchmark whose variants are checked out or built first is
planned once they are ready."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from perflab.budget.costs import LEARN_FROM_S, CostProbe, LensCost, learned_costs, lens_costs
from perflab.budget.machine_speed import RECENT_PROBES, MachineSpeed
from perflab.budget.plan import BudgetPlan, plan_budget
from perflab.engine.prepare.caches import IsolatedCaches, NativeRunsAhead
from perflab.engine.prepare.probe import ProbeHost, probe_benchmark
from perflab.engine.prepare.recent_probes import Recalled, RecentProbes, benchmark_key
from perflab.lenses.registry import cost_model, descriptor_for, shared_recordings
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import PlanReporter, ProgressReporter
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import VARIANT_FIELDS, Benchmark, Experiment, Variant
from perflab.records.settings import Settings

# A workflow's runs in one process (bisect steps, history points, a stack's pairs) plan with
# the machine speed one of them measured this long ago at most: the reference runs are a large
# share of a short run's cost (bench/results/suite_speed_2026-11-28.md), and the recent probes'
# median joins the reused speed anyway.
SPEED_REUSE_S = 60.0


class SpeedsMeasured:
    """The machine speeds measured by the runs that share it (`RunServices.speeds`), by CPU and
    whether valgrind's reference is among them, each with when it was measured (on the
    planner's clock)."""

    def __init__(self) -> None:
        self.by_cpu: dict[tuple[int | None, bool], tuple[float, MachineSpeed]] = {}

    def lately(self, cpu: int | None, valgrind: bool, now_s: float) -> MachineSpeed | None:
        """The speed measured on `cpu` within SPEED_REUSE_S of `now_s`, with valgrind's
        reference where `valgrind` asks for it."""
        for with_valgrind in (True,) if valgrind else (False, True):
            at, speed = self.by_cpu.get((cpu, with_valgrind), (-math.inf, None))
            if speed is not None and now_s - at <= SPEED_REUSE_S:
                return speed
        return None

    def measured(self, cpu: int | None, valgrind: bool, speed: MachineSpeed, now_s: float) -> None:
        self.by_cpu[(cpu, valgrind)] = (now_s, speed)


@dataclass
class BenchmarkPlanner:
    """Probes benchmarks and plans their budgets. The machine's speed is measured with the
    first probe, and holds for the run's others."""

    runner: ProcessRunner
    default_python: str
    cpu: int | None
    speed: MachineSpeed | None = None
    # the last minutes' probes on this machine, which join each probe's figures; None: this
    # probe alone (tests, and runs that must not read what others measured)
    recent: RecentProbes | None = None
    # the speeds the runs sharing it measured lately, which a planner with `recent` reuses
    speeds: SpeedsMeasured = field(default_factory=SpeedsMeasured)
    # seconds, when a speed was measured (the run's RunServices.clock)
    clock: Callable[[], float] = time.monotonic

    def plan(
        self,
        benchmark: Benchmark,
        experiment: Experiment,
        *,
        before_s: float = 0.0,
        waited_s: float = 0.0,
        beside: Callable[[int | None], None] | None = None,
    ) -> BudgetPlan:
        """Probe the benchmark and split its budget between the lenses; raises BudgetError when
        a minimum does not fit and the settings ask for --strict-budget. `beside`: work the
        probe starts on the CPU beside it (`probe_benchmark`)."""
        settings = experiment.settings
        valgrind = any(descriptor_for(m).planning.runs_valgrind for m in settings.metrics)
        carried = self.speed
        if carried is None and self.recent is not None:
            carried = self.speeds.lately(self.cpu, valgrind, self.clock())
        probe = probe_benchmark(
            benchmark,
            experiment,
            ProbeHost(self.runner, self.default_python, self.cpu),
            valgrind=valgrind,
            speed=carried,
            beside=beside,
        )
        key = benchmark_key(benchmark, experiment) if self.recent is not None else ""
        recalled = Recalled()
        if self.recent is not None:
            recalled = self.recent.recall(key, probe.kind, probe.variants)
            probe = self._with_recent(
                self.recent, key, recalled, probe, before_s, measured=carried is None
            )
        self.speed = probe.speed
        if carried is None and self.recent is not None:  # measured now, joined by the recent
            self.speeds.measured(self.cpu, valgrind, probe.speed, self.clock())
        costs = learned_costs(_lens_costs(probe, settings), recalled.lens_ratios)
        try:
            plan = plan_budget(
                settings.budget_s,
                probe,
                costs,
                strict=settings.strict_budget,
                before_s=max(0.0, before_s),
                waited_s=waited_s,
            )
        except ConfigError as error:
            error.benchmark = error.benchmark or benchmark.name
            raise
        return replace(plan, memory_key=key)

    def learn(self, plan: BudgetPlan, metric: Metric, took_s: float) -> None:
        """Remember what a fixed-cost lens took against its model's minimum, for the next
        plans of this benchmark here (budget.learned_costs)."""
        cost = plan.share_of(metric).cost
        if self.recent is None or not plan.memory_key or cost.elastic:
            return
        modelled_s = cost.minimum_s / cost.learned
        if modelled_s >= LEARN_FROM_S:
            self.recent.remember_lens(plan.memory_key, metric, took_s / modelled_s)

    def _with_recent(
        self,
        recent: RecentProbes,
        key: str,
        recalled: Recalled,
        probe: CostProbe,
        before_s: float,
        *,
        measured: bool,
    ) -> CostProbe:
        """The probe joined by the recent ones (budget.machine_speed.RECENT_PROBES), and remembered;
        `before_s`: perflab's start-up, counted in this benchmark (its first), else 0;
        `measured`: the probe measured the machine's speed (not carried)."""
        recent.remember(
            key, probe, speed_measured=measured, before_s=before_s if before_s > 0 else None
        )
        speed = probe.speed.with_recent(recalled.speeds) if measured else probe.speed
        return replace(
            probe.with_recent(recalled.same_benchmark).with_recent_cpus(recalled.counting_cpus),
            speed=speed,
            recent_before_s=recalled.startups_s[-RECENT_PROBES:],
        )


def plans_before_run(
    experiment: Experiment,
    planner: BenchmarkPlanner,
    caches: IsolatedCaches,
    started_at_s: float | None,
    waited_s: float,
    clock: Callable[[], float] = time.monotonic,
    ahead: NativeRunsAhead | None = None,
) -> dict[str, BudgetPlan]:
    """The plan of every benchmark whose variants need no preparation, before the run is
    stored: a budget too small refuses here. The first benchmark's budget holds perflab's own
    start-up, when known (`started_at_s`, read on the run's `clock`); the wait for a CPU other
    perflab runs held is theirs, not charged. `ahead`: the first benchmark's other variants
    (those needing no preparation), a statement's, run natively beside its probe
    (`NativeRunsAhead`); only the first's, so that they are done before anything is measured
    (a later benchmark's would run beside the earlier ones' measurements)."""
    plans: dict[str, BudgetPlan] = {}
    for index, benchmark in enumerate(experiment.benchmarks):
        if needs_preparation(experiment.baseline.at(benchmark.params)):
            continue
        first = index == 0
        at_point = _at_point(experiment, benchmark, caches)
        others = [v for v in at_point.variants[1:] if not needs_preparation(v)]
        statement = first and benchmark.kind is BenchmarkKind.STATEMENT
        plans[benchmark.name] = planner.plan(
            benchmark,
            at_point,
            before_s=_since(started_at_s, clock) - waited_s if first else 0.0,
            waited_s=waited_s if first else 0.0,
            beside=ahead.beside_probe(benchmark, others)
            if ahead and others and statement
            else None,
        )
    return plans


def needs_preparation(variant: Variant) -> bool:
    """A variant checked out or built before it runs: probed once it is ready."""
    return any(getattr(variant, f.name) for f in VARIANT_FIELDS if f.prepares)


def show_plan(progress: ProgressReporter, benchmark: str, plan: BudgetPlan) -> None:
    if isinstance(progress, PlanReporter):
        progress.plan(benchmark=benchmark, text=plan.describe(), eta_s=plan.eta_s)


def _at_point(experiment: Experiment, benchmark: Benchmark, caches: IsolatedCaches) -> Experiment:
    variants = tuple(caches.applied(v.at(benchmark.params)) for v in experiment.variants)
    return replace(by_its_lenses(experiment, benchmark), variants=variants)


def by_its_lenses(experiment: Experiment, benchmark: Benchmark) -> Experiment:
    """The experiment as `benchmark` is planned and measured in it: by the run's lenses that
    measure it (`Benchmark.measured_by`), so that the others are neither priced nor run."""
    metrics = benchmark.lenses_among(experiment.settings.metrics)
    if metrics == experiment.settings.metrics:
        return experiment
    return replace(experiment, settings=replace(experiment.settings, metrics=metrics))


def _since(started_at_s: float | None, clock: Callable[[], float]) -> float:
    return 0.0 if started_at_s is None else max(0.0, clock() - started_at_s)


def _lens_costs(probe: CostProbe, settings: Settings) -> list[LensCost]:
    """Each of the run's lenses' costs by its descriptor's model, told which recordings two or
    more of them share (their descriptors' `shares_recording`): those are made once."""
    models = {metric: cost_model(metric) for metric in settings.metrics}
    shared = replace(probe, shared_recordings=shared_recordings(settings.metrics))
    return lens_costs(shared, settings, models)
