"""How one benchmark's budget is split between its lenses (`plan_budget`), how an elastic
lens's share is re-planned from the time really left (`elastic_share`), and what the plan says
when the budget is too small or was overrun. Pure."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from perflab.budget.costs import CostProbe, LensCost
from perflab.budget.machine_speed import in_words
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric

# a benchmark that ends this much over its budget is warned about
OVERRUN_MARGIN = 0.1
FIT_MARGIN = 1.1  # the budget said to fit is the needs plus this margin (they are estimates)
# ... growing with the machine's factor up to this one at LOADED_FACTOR: a loaded machine's
# load moves between runs, and so do two runs' needs.
# Continuous, so that two asks whose factors fall either side of a step get the same answer.
LOADED_FACTOR = 2.0
LOADED_FIT_MARGIN = 1.25
# after measuring, once per benchmark: loading the run from the store and rendering it (JSON,
# terminal)
REPORT_S = 0.1

# perflab's own start-up (imports, the lenses' checks, before the probe) on the reference
# machine, quiet, with a margin: a "would fit" counts this run's start-up up to this, scaled by
# the machine's factor; a start-up that stalled beyond it is this run's, not the next one's
PERFLAB_STARTUP_S = 1.0
STALL_SAID_S = 0.5  # a "would fit" says what it counted for them from this much less


@dataclass(frozen=True)
class LensShare:
    """One lens's part of a benchmark's budget, with the cost model that sized it."""

    metric: Metric
    share_s: float  # the lens's part of the budget
    cost: LensCost


@dataclass(frozen=True, kw_only=True)
class BudgetPlan:
    """How one benchmark's budget is split between its lenses."""

    budget_s: float
    probe: CostProbe
    shares: tuple[LensShare, ...]  # in the order the lenses run: fixed costs first
    fits: bool  # every lens's minimum fits inside the budget
    needed_s: float  # the probe, every lens's minimum, and what runs after measuring
    # after measuring: every lens's analysis of this benchmark and the report, kept out of the
    # lenses' shares (they run once every benchmark is measured)
    after_s: float = 0.0
    # before the probe: the perflab command's own start-up (imports, preflight), already
    # spent, counted in its first benchmark's budget
    before_s: float = 0.0
    # waiting for a CPU other perflab runs held: their time, not in before_s nor the budget
    waited_s: float = 0.0
    # the benchmark in the recent probes' memory (engine/prepare/recent_probes.py); "": not kept
    memory_key: str = ""

    @property
    def measuring_s(self) -> float:
        """The part of the budget until the last lens ends (from perflab's start-up or the
        probe): all of it but what runs after measuring."""
        return self.budget_s - self.after_s

    @property
    def eta_s(self) -> float:
        """How long the benchmark is expected to take from the start of its probe."""
        return max(self.budget_s, self.needed_s)

    @property
    def usual_before_s(self) -> float:
        """perflab's start-up as a next run would see it: this run's, at most the usual one on
        this machine now (the median with the recent runs', and PERFLAB_STARTUP_S at the
        machine's factor)."""
        recent = statistics.median((self.before_s, *self.probe.recent_before_s))
        return min(self.before_s, recent, PERFLAB_STARTUP_S * self.probe.speed.factor)

    @property
    def stalled_s(self) -> float:
        """What perflab's start-up and the probe took beyond their usual time here now
        (`usual_before_s`, `CostProbe.usual_s`): this run's stalls, which a next one does not
        repeat."""
        return self.before_s - self.usual_before_s + self.probe.probe_s - self.probe.usual_s

    @property
    def usual_needed_s(self) -> float:
        """What the benchmark needs with perflab's start-up and the probe as they usually take
        here now: the same command asked twice gets the same answer, whatever one run's
        start-up or probe stalled on."""
        return self.needed_s - self.stalled_s

    @property
    def fitting_budget_s(self) -> float:
        """The smallest budget (whole seconds, with a margin) that holds every minimum, with
        the usual start-up and probe: a larger margin on a loaded machine (growing with its
        factor), where the next run's needs may well be larger."""
        loaded = min(1.0, max(0.0, (self.probe.speed.factor - 1.0) / (LOADED_FACTOR - 1.0)))
        margin = FIT_MARGIN + loaded * (LOADED_FIT_MARGIN - FIT_MARGIN)
        return float(math.ceil(self.usual_needed_s * margin))

    def counted_for_fit(self) -> str:
        """What a "would fit" counted for perflab's start-up and the probe, where that is
        STALL_SAID_S or more less than what this run's took: " (counting ...)", else ""."""
        counted = [
            f"{what} as {usual:.1f} s (this run's took {took:.1f} s)"
            for what, usual, took in (
                ("perflab's start-up", self.usual_before_s, self.before_s),
                ("the probe", self.probe.usual_s, self.probe.probe_s),
            )
            if took - usual >= STALL_SAID_S
        ]
        if not counted:
            return ""
        return f" (counting {' and '.join(counted)}, as usual on this machine now)"

    def share_of(self, metric: Metric) -> LensShare:
        return next(s for s in self.shares if s.metric == metric)

    def describe(
        self,
        took_s: Mapping[Metric, float] | None = None,
        given_s: Mapping[Metric, float] | None = None,
        failed_s: Mapping[Metric, float] | None = None,
    ) -> str:
        """The split, in words: "budget 20 s: probe 0.3 s, instructions 12.4 s, time 7.3 s";
        with `took_s` (what each lens really took), "instructions 11.0 s of its 12.4 s" for
        every lens that ran; with `given_s` (a sampling lens's share, re-planned from what the
        lenses before it left), "counters 10.8 s of its 11.2 s (planned 7.0 s)" where the two
        differ; with `failed_s` (lenses that failed, and when), "instructions failed after
        1.1 s (planned 7.6 s)"; and once measured, a lens in neither was "not run"."""
        parts = ", ".join(_share_words(s, took_s, given_s, failed_s) for s in self.shares)
        forked = [s.metric.value for s in self.shares if s.cost.forked]
        how = (
            f"; {', '.join(forked)} forks its workers from one process per variant that "
            f"imported the set-up's modules once ({self.probe.import_s:.1f} s of imports)"
            if forked
            else ""
        )
        over = "" if self.fits else f" (the minimums need {self.needed_s:.0f} s)"
        started = f"perflab's start-up {self.before_s:.1f} s, " if self.before_s else ""
        waited = (
            f"; besides, {self.waited_s:.1f} s waiting for a CPU other perflab runs held "
            "(not counted)"
            if self.waited_s >= 0.1
            else ""
        )
        # once measured, the parts listed are what was used: analysis and report come after
        # the "used" figure, so they are said apart from the parts (else they exceed it)
        after = (
            f", analysis and report {self.after_s:.1f} s{how}; "
            if took_s is None
            else f"{how}; analysis and report follow ({self.after_s:.1f} s kept for them); "
        )
        return (
            f"budget {self.budget_s:g} s{over}: {started}probe {self.probe.probe_s:.1f} s"
            f"{self.probe.recent_words()}, "
            f"{parts}{after}"
            f"{self.probe.speed.describe()}{waited}"
        )

    def overrun(
        self,
        used_s: float,
        took_s: Mapping[Metric, float],
        given_s: Mapping[Metric, float],
    ) -> str | None:
        """What took longer than the budget and why, in words ("took 34 s of --budget 30:
        five lenses need about 34 s on this machine ..."), or None when the benchmark ended
        within OVERRUN_MARGIN of its budget. `used_s`: from perflab's start-up (the first
        benchmark) or the probe to the end of the last lens. The part named is the one that
        took the most beyond what was expected of it: perflab's start-up or the probe beyond
        their usual time here, a lens beyond its share, or the minimums beyond the budget."""
        if used_s <= self.budget_s * (1 + OVERRUN_MARGIN):
            return None
        head = f"took {used_s:.0f} s of --budget {self.budget_s:g}"

        def over(share: LensShare) -> float:
            return took_s.get(share.metric, 0.0) - given_s.get(share.metric, share.share_s)

        worst = max(self.shares, key=over)
        lacked_s = self.usual_needed_s - self.budget_s
        stalls = {
            "start-up": self.before_s - self.usual_before_s,
            "probe": self.probe.probe_s - self.probe.usual_s,
        }
        stalled = max(stalls, key=lambda part: stalls[part])
        if stalls[stalled] > max(over(worst), lacked_s, 0.0):
            return f"{head}: {self._stall_words(stalled)}"
        if lacked_s > 0 and over(worst) <= lacked_s:
            return f"{head}: {self._minimums_words(used_s)}"
        if over(worst) <= 0:
            return (
                f"{head}: perflab's start-up, the probe and the analysis took longer than planned"
            )
        short = (
            "" if lacked_s <= 0 else f"; the minimums alone need about {self.usual_needed_s:.0f} s"
        )
        return (
            f"{head}: the {worst.metric.value} lens took {took_s[worst.metric]:.0f} s where the "
            f"plan gave it {given_s.get(worst.metric, worst.share_s):.0f} s (its minimum "
            f"measurement estimated at {worst.cost.minimum_s:.1f} s: {worst.cost.needs}){short}"
        )

    def _stall_words(self, part: str) -> str:
        """perflab's start-up or the probe, beyond its usual time: what it took, and what."""
        if part == "start-up":
            return (
                f"perflab's start-up took {self.before_s:.0f} s where about "
                f"{self.usual_before_s:.1f} s is usual on this machine now (its imports and the "
                "lenses' checks, before the probe; waiting for a CPU is not counted)"
            )
        return (
            f"the probe took {self.probe.probe_s:.0f} s where its parts (the benchmark's "
            f"start-up and one sample, the machine's reference runs) took about "
            f"{self.probe.usual_s:.1f} s: the machine held it up"
        )

    def _minimums_words(self, used_s: float) -> str:
        """The lenses' minimums, which do not fit the budget. The figure said is never above
        `used_s`: a plan that estimated more than the run took says what it took instead (a
        warning must not contradict the time beside it)."""
        largest = max(self.shares, key=lambda s: s.cost.minimum_s)
        count = len(self.shares)
        lenses = f"the {largest.metric.value} lens" if count == 1 else f"{in_words(count)} lenses"
        if self.usual_needed_s <= used_s * (1 + OVERRUN_MARGIN):
            needed = f"about {self.usual_needed_s:.0f} s on this machine now"
            measurement = f"{largest.cost.minimum_s:.0f} s: {largest.cost.needs}"
        else:
            needed = (
                f"more than that: about {used_s:.0f} s this time (planned at "
                f"{self.usual_needed_s:.0f} s on this machine now)"
            )
            measurement = largest.cost.needs
        return (
            f"{lenses} need{'s' if count == 1 else ''} {needed} (the {largest.metric.value} "
            f"lens's minimum measurement {measurement}); each lens measured its minimum"
        )

    def refusal(self) -> BudgetError:
        """The error when the minimums do not fit: which lens needs what, and the choices."""
        largest = max(self.shares, key=lambda s: s.cost.minimum_s)
        needs = "; ".join(
            f"{s.metric.value}: {s.cost.minimum_s:.1f} s ({s.cost.needs})" for s in self.shares
        )
        return BudgetError(
            f"--budget {self.budget_s:g} s is too small for this benchmark's minimum "
            f"measurement: the {largest.metric.value} lens alone needs "
            f"{largest.cost.minimum_s:.0f} s ({largest.cost.needs}); all lenses with the probe "
            f"and the analysis need {self.needed_s:.0f} s, --budget {self.fitting_budget_s:g} "
            f"would fit{self.counted_for_fit()}",
            hint=f"give --budget {self.fitting_budget_s:g} or more, measure fewer lenses "
            "(--metric), or leave out --strict-budget to measure the minimums whatever they cost",
            detail=f"perflab's start-up {self.before_s:.1f} s"
            + (
                f" (and {self.waited_s:.1f} s waiting for a CPU, not counted)"
                if self.waited_s >= 0.1
                else ""
            )
            + f"; probe {self.probe.probe_s:.1f} s{self.probe.recent_words()}; "
            f"{needs}; analysis and report after "
            f"measuring {self.after_s:.1f} s; {self.probe.speed.describe()}",
        )


def _share_words(
    share: LensShare,
    took_s: Mapping[Metric, float] | None,
    given_s: Mapping[Metric, float] | None,
    failed_s: Mapping[Metric, float] | None,
) -> str:
    """One lens's part of `BudgetPlan.describe`."""
    name = share.metric.value
    planned = f"(planned {share.share_s:.1f} s)"
    if failed_s is not None and share.metric in failed_s:
        return f"{name} failed after {failed_s[share.metric]:.1f} s {planned}"
    took = None if took_s is None else took_s.get(share.metric)
    if took is None:
        # once a lens failed, the lenses after it never ran
        return f"{name} not run {planned}" if failed_s else f"{name} {share.share_s:.1f} s"
    share_given_s = share.share_s if given_s is None else given_s.get(share.metric, share.share_s)
    replanned = f" {planned}" if abs(share_given_s - share.share_s) >= 0.05 else ""
    return f"{name} {took:.1f} s of its {share_given_s:.1f} s{replanned}"


class BudgetError(ConfigError):
    """With --strict-budget: the budget cannot hold a lens's minimum measurement (exit status
    2, nothing measured)."""


def plan_budget(
    budget_s: float,
    probe: CostProbe,
    costs: Sequence[LensCost],
    *,
    strict: bool = False,
    before_s: float = 0.0,
    waited_s: float = 0.0,
) -> BudgetPlan:
    """Split `budget_s` (perflab's start-up `before_s`, the probe's time and what runs after
    measuring included) between lenses of these costs: what runs after measuring (each lens's
    analysis, the report) and the fixed costs as estimated, then each elastic lens its minimum plus
    a part of what is left, by weight. When the minimums do not fit, the plan says so (`fits`) and
    the elastic lenses get their minimums; with `strict` (--strict-budget) it raises BudgetError
    instead."""
    fixed, elastic = charge_once(
        [c for c in costs if not c.elastic], [c for c in costs if c.elastic]
    )
    after_s = sum(c.after_s for c in costs) + REPORT_S * probe.speed.factor
    needed_s = before_s + probe.probe_s + sum(c.minimum_s for c in costs) + after_s
    surplus_s = max(0.0, budget_s - needed_s)
    weights = sum(c.weight for c in elastic)
    shares = [LensShare(c.metric, c.minimum_s, c) for c in fixed] + [
        LensShare(c.metric, c.minimum_s + surplus_s * c.weight / weights, c) for c in elastic
    ]
    fits = needed_s <= budget_s
    plan = BudgetPlan(
        budget_s=budget_s,
        probe=probe,
        shares=tuple(shares),
        fits=fits,
        needed_s=needed_s,
        after_s=after_s,
        before_s=before_s,
        waited_s=waited_s,
    )
    if not fits and strict and not probe.failed:
        raise plan.refusal()
    return plan


def charge_once(*in_run_order: list[LensCost]) -> list[list[LensCost]]:
    """The costs (fixed, then elastic: the order the lenses run in), a shared measurement
    (`LensCost.shares`) charged once, to the first lens that reads it: the one that makes it."""
    ordered = [cost for costs in in_run_order for cost in costs]
    moved: dict[Metric, LensCost] = {}
    for name in {c.shares for c in ordered if c.shares}:
        readers = [c for c in ordered if c.shares == name]
        first, owner = readers[0], max(readers, key=lambda c: c.shared_s)
        if len(readers) > 1 and owner is not first:
            moved[owner.metric] = replace(
                owner, minimum_s=owner.minimum_s - owner.shared_s, shared_s=0.0
            )
            moved[first.metric] = replace(
                first, minimum_s=first.minimum_s + owner.shared_s, shared_s=owner.shared_s
            )
    return [[moved.get(c.metric, c) for c in costs] for costs in in_run_order]


def elastic_share(
    plan: BudgetPlan, metric: Metric, left_s: float, still_to_run: Sequence[Metric]
) -> float:
    """An elastic lens's share when it starts, from the time really left of the benchmark's
    budget: what the lenses still to run after it are planned to take is kept for them, the
    rest is split by weight between it and the other elastic lenses still to run; never below
    its minimum. Its share is reduced by half its overshoot (it stops after the step that
    crosses the share), so that on average the benchmark ends on its budget."""
    mine = plan.share_of(metric).cost
    own_minimum_s = mine.minimum_s - mine.started_before_s  # its servers run already
    others = [plan.share_of(m) for m in still_to_run if m != metric]
    kept_s = sum(s.cost.minimum_s for s in others if not s.cost.elastic)
    elastic_weights = mine.weight + sum(s.cost.weight for s in others if s.cost.elastic)
    elastic_minimums = sum(s.cost.minimum_s for s in others if s.cost.elastic)
    free_s = max(0.0, left_s - kept_s - own_minimum_s - elastic_minimums)
    share_s = own_minimum_s + free_s * mine.weight / elastic_weights - mine.overshoot_s / 2
    # at its minimum it stops at the minimum, not after a step past its share
    return max(own_minimum_s, share_s)
