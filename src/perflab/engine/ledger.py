"""A benchmark's budget as it is spent: each lens's share, given when the lens starts, what
each lens really took, and the notes that compare them with the plan."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from perflab.budget.plan import BudgetPlan, elastic_share
from perflab.lenses.registry import descriptor_for
from perflab.measure.lens import Lens
from perflab.records.kinds import Metric
from perflab.records.model import Note, Severity
from perflab.store import RunSink

# a lens that measured longer than this times its share (or 1 s, whichever is more) gets a note;
# a smaller overrun is within the cost estimates' own error
SLOW_LENS_FACTOR = 1.5


def run_order(lenses: list[Lens], plan: BudgetPlan) -> list[Lens]:
    """Lenses with a fixed cost first, then those that sample until their share is used: each
    of those gets what is really left, so the fixed costs' estimates need not be exact."""
    return sorted(lenses, key=lambda lens: plan.share_of(lens.metric).cost.elastic)


@dataclass
class BudgetLedger:
    """One benchmark's budget account. `metrics`: its lenses in the order they measure."""

    plan: BudgetPlan
    metrics: tuple[Metric, ...]
    begun_s: float  # `clock()` when the benchmark's budget began
    took_s: dict[Metric, float] = field(default_factory=dict)  # what each lens really took
    given_s: dict[Metric, float] = field(default_factory=dict)  # and the share it was given
    failed_s: dict[Metric, float] = field(default_factory=dict)  # a failed lens: after how long
    clock: Callable[[], float] = time.monotonic  # seconds; tests give a fake

    @classmethod
    def begun(
        cls, plan: BudgetPlan, lenses: list[Lens], clock: Callable[[], float] = time.monotonic
    ) -> BudgetLedger:
        """The budget began with the probe (and perflab's start-up, for the first benchmark)."""
        return cls(
            plan,
            tuple(lens.metric for lens in lenses),
            begun_s=clock() - plan.probe.probe_s - plan.before_s,
            clock=clock,
        )

    @property
    def deadline_s(self) -> float:
        """The lenses measure until the budget less what runs after measuring."""
        return self.begun_s + self.plan.measuring_s

    def give(self, metric: Metric) -> float:
        """The lens's share, now: a sampling lens's share is re-planned from what is really
        left for it and the lenses after it."""
        share = self.plan.share_of(metric)
        share_s = share.share_s
        if share.cost.elastic:
            left = [m for m in self.metrics if m not in self.given_s]
            share_s = elastic_share(self.plan, metric, self.deadline_s - self.clock(), left)
        self.given_s[metric] = share_s
        return share_s

    def spent(self, metric: Metric, since_s: float, *, failed: bool = False) -> None:
        """Record what the lens took since `since_s` (its fork servers included)."""
        (self.failed_s if failed else self.took_s)[metric] = self.clock() - since_s

    def note_slow_lens(self, writer: RunSink, lens: Lens, benchmark: str, since_s: float) -> None:
        """When a lens's minimum (generations, tool start-up, callgrind) took much longer than
        its share, say so rather than surprise: the plan's estimate was short, or (a sampling
        lens, its share re-planned from what was left) the lenses before it took part of it."""
        elapsed_s = self.clock() - since_s
        share_s = self.given_s[lens.metric]
        planned_s = self.plan.share_of(lens.metric).share_s
        if descriptor_for(
            lens.metric
        ).planning.reports_overruns or elapsed_s <= SLOW_LENS_FACTOR * max(share_s, 1.0):
            return
        if elapsed_s <= SLOW_LENS_FACTOR * max(planned_s, 1.0):
            why = (
                f"the lenses before it left it {share_s:.1f} s of its planned {planned_s:.1f} s, "
                "less than its minimum measurement"
            )
        else:
            why = (
                "its minimum measurement (fresh workers, tool start-up) is longer than the plan "
                f"estimated ({planned_s:.1f} s)"
            )
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"the {lens.metric.value} lens took {elapsed_s:.0f} s, more than its "
                f"share of the budget ({share_s:.1f} s): {why}",
                hint="the plan's estimates come from a probe of the benchmark; see the lens's "
                "page in docs/lenses/ and docs/statistics.md (the budget)",
                benchmark=benchmark,
                metric=lens.metric,
            )
        )

    def note_used(self, writer: RunSink, benchmark: str) -> None:
        """The plan, and what the benchmark really took against its budget (its probe and every
        lens included), each lens's time beside its share: one note per benchmark; and, when it
        ran over its budget (a target, not a wall), a warning that says what took longer and
        why."""
        plan = self.plan
        used_s = self.clock() - self.begun_s
        anyway = "" if plan.fits else f"; {_minimums_anyway(plan)}"
        described = plan.describe(self.took_s, self.given_s, self.failed_s)
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"used {used_s:.1f} s of the {described}{anyway}",
                benchmark=benchmark,
            )
        )
        failed = self.failed_s or plan.probe.failed
        over = None if failed else plan.overrun(used_s, self.took_s, self.given_s)
        if over is not None:
            writer.add_note(
                Note(
                    severity=Severity.WARNING,
                    message=over,
                    hint=f"--budget {self._would_hold_s(used_s):g} would hold it on this "
                    "machine now, "
                    "or measure fewer lenses (--metric); --strict-budget refuses before "
                    "measuring rather than run over",
                    benchmark=benchmark,
                )
            )

    def _would_hold_s(self, used_s: float) -> float:
        """The budget that would have held this benchmark: what it used, less its start-up's
        and probe's stalls (a next run does not repeat them), with a margin; at least the
        budget said to fit."""
        plan = self.plan
        return max(plan.fitting_budget_s, math.ceil((used_s - plan.stalled_s) * 1.1))


def _minimums_anyway(plan: BudgetPlan) -> str:
    """Why the lenses measured only their minimums: they do not fit the budget, or perflab's
    start-up and the probe stalled and left them no more."""
    if plan.usual_needed_s > plan.budget_s:
        return f"the minimums were measured anyway (they need about {plan.usual_needed_s:.0f} s)"
    return (
        f"the lenses measured their minimums: perflab's start-up and the probe took "
        f"{plan.stalled_s:.0f} s longer than usual here"
    )
