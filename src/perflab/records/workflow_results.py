"""The records of the workflows over a history (`perflab check`, `perflab history`): what
`perflab.workflows` returns and the renderers format (bisect's are in `records/bisect.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perflab.records.bisect import Commit, StepOutcome, StepState
from perflab.records.kinds import Metric
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.results import RunResult

# the CI variables that name the branch a pull request targets (`perflab check`'s base)
BASE_VARIABLES = ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")


def base_words(base_from: str) -> str:
    """Where `check`'s base came from, in words: given, named by a CI variable, or the
    default."""
    if base_from == "--base":
        return "given with --base"
    if base_from in BASE_VARIABLES:
        return f"from {base_from}"
    return "the default: no --base, and neither " + " nor ".join(BASE_VARIABLES) + " is set"


@dataclass(frozen=True)
class CheckResult:
    """A check: the head measured against its base, and whether it is a confirmed regression."""

    base_ref: str  # what the base was given as (or found from the CI's variables)
    base: Commit  # the commit compared against: the merge base of base_ref and head, by default
    head: Commit
    metric: Metric
    threshold: float
    outcome: StepOutcome  # the head against the base: bad = a confirmed regression
    result: RunResult
    notes: tuple[str, ...] = ()
    working_tree: bool = False  # head is HEAD with the working tree's uncommitted changes
    lenses: tuple[Metric, ...] = ()  # every lens measured, `metric` (the gate's) first
    # another lens measured beside the gate's that disagrees with it
    disagreement: LensDisagreement | None = None
    # the CI's default gate (instructions) did not fail: the time lens beside it says
    # decisively faster
    overruled: bool = False
    # where the base came from: "--base", the CI variable that named it, or "the default"
    base_from: str = ""
    # the benchmarks whose whole interval lies beyond the threshold, worst first (a suite
    # names each; the gate fails on any)
    regressed: tuple[str, ...] = ()

    @property
    def regression(self) -> bool:
        return self.outcome.state is StepState.BAD and not self.overruled

    def to_json(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "base": {"commit": self.base.commit, "subject": self.base.subject},
            "head": {"commit": self.head.commit, "subject": self.head.subject},
            "working_tree": self.working_tree,
            "metric": str(self.metric),
            "threshold": self.threshold,
            "state": str(self.outcome.state),
            "regression": self.regression,
            "ratio": self.outcome.ratio,
            "ci_low": self.outcome.ci_low,
            "ci_high": self.outcome.ci_high,
            "run_id": self.result.run_id,
            "notes": list(self.notes),
            "metrics": [str(m) for m in self.lenses or (self.metric,)],
            "disagreement": self.disagreement.to_json() if self.disagreement else None,
            "overruled": self.overruled,
            "base_from": self.base_from or None,
            "regressed": list(self.regressed),
            "benchmarks": len(self.result.experiment.benchmarks),
        }


@dataclass(frozen=True)
class HistoryPoint:
    """One commit of a history with its value (measured now, reused, or skipped and why)."""

    commit: str
    subject: str
    tree: str
    value: float | None = None  # per iteration, in `unit`; None: not measured
    unit: str = ""
    run_id: int | None = None  # the run the value comes from
    reused: bool = False  # from an earlier run (same tree, benchmark and lens)
    skipped: str = ""  # why it has no value
    node: str = ""  # where it was measured, named only when a history spans several nodes
    normalised_value: float | None = None  # across nodes: per node by a reference loop
    # across runs of a lens whose level moves with the machine: on the first run's level,
    # through the commits the runs share (analyse/run_levels.py); None: as measured
    levelled_value: float | None = None

    @property
    def series_value(self) -> float | None:
        """The value compared along the history: levelled across runs, or normalised across
        nodes, where it could be."""
        if self.levelled_value is not None:
            return self.levelled_value
        return self.normalised_value if self.normalised_value is not None else self.value

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "subject": self.subject,
            "tree": self.tree,
            "value": self.value,
            "unit": self.unit,
            "run_id": self.run_id,
            "reused": self.reused,
            "skipped": self.skipped or None,
            "node": self.node or None,
            "normalised_value": self.normalised_value,
            "levelled_value": self.levelled_value,
        }


@dataclass(frozen=True)
class RunScale:
    """A run of a history's series put on the level of the series' first run: its values times
    `scale`. `shared_ratio`: the figure of a commit both it and run `against_run` measured,
    there over here; `moved`: beyond the series' noise, so `scale` is run `against_run`'s
    times `shared_ratio` (else `against_run`'s own: the run is taken to be on its level)."""

    run_id: int
    against_run: int
    shared_commit: str
    scale: float
    shared_ratio: float = 1.0
    moved: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "against_run": self.against_run,
            "shared_commit": self.shared_commit,
            "scale": self.scale,
            "shared_ratio": self.shared_ratio,
            "moved": self.moved,
        }


@dataclass(frozen=True)
class SeriesStep:
    """A change point of a series before a direct comparison confirms it: the point where the
    new level starts (`index`, `after`), the point before it, and the level after over the
    level before."""

    index: int
    before: HistoryPoint
    after: HistoryPoint
    series_ratio: float

    @classmethod
    def at(cls, points: list[HistoryPoint], index: int, series_ratio: float) -> SeriesStep:
        """The step into `points[index]` from the point before it."""
        return cls(index, points[index - 1], points[index], series_ratio)

    def unconfirmed(self, run_id: int | None) -> HistoryChange:
        """The change as the series alone shows it: no direct comparison says anything."""
        return HistoryChange(
            index=self.index,
            before=self.before,
            after=self.after,
            series_ratio=self.series_ratio,
            ratio=None,
            ci_low=None,
            ci_high=None,
            confirmed=False,
            run_id=run_id,
        )


@dataclass(frozen=True, kw_only=True)
class HistoryChange:
    """A change point of the series, and the direct comparison of the commits either side."""

    index: int  # the point where the new level starts
    before: HistoryPoint
    after: HistoryPoint
    series_ratio: float  # the level after over the level before
    ratio: float | None  # the direct comparison: after / before
    ci_low: float | None
    ci_high: float | None
    confirmed: bool  # the direct comparison's whole CI beyond the threshold, same direction
    run_id: int | None
    reused: bool = False  # the comparison of an earlier history of the same two trees
    # commits of the line between `before` and `after` that were not measured (--every, or
    # skipped): the step happened in one of them or in `after`; bisect finds which
    unmeasured_between: int = 0
    result: RunResult | None = field(default=None, compare=False, repr=False)
    # another lens of the direct comparison that disagrees with the history's lens
    disagreement: LensDisagreement | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "reused": self.reused,
            "unmeasured_between": self.unmeasured_between,
            "index": self.index,
            "before": self.before.commit,
            "after": self.after.commit,
            "after_subject": self.after.subject,
            "series_ratio": self.series_ratio,
            "ratio": self.ratio,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "confirmed": self.confirmed,
            "run_id": self.run_id,
            "disagreement": self.disagreement.to_json() if self.disagreement else None,
        }


@dataclass(frozen=True)
class HistoryResult:
    """A history: a benchmark's value at each commit of a range, and the changes found in it."""

    range_text: str
    metric: Metric
    threshold: float
    points: tuple[HistoryPoint, ...]  # oldest first
    changes: tuple[HistoryChange, ...]
    measured_now: int
    seconds: float
    notes: tuple[str, ...] = ()
    benchmark: str | None = None  # of a suite: the benchmark this series is of
    run_scales: tuple[RunScale, ...] = ()  # the runs whose values were levelled, and how

    def to_json(self) -> dict[str, Any]:
        return {
            "range": self.range_text,
            "metric": str(self.metric),
            "threshold": self.threshold,
            "points": [p.to_json() for p in self.points],
            "changes": [c.to_json() for c in self.changes],
            "measured_now": self.measured_now,
            "reused": sum(p.reused for p in self.points),
            "seconds": self.seconds,
            "notes": list(self.notes),
            "benchmark": self.benchmark,
            "run_scales": [r.to_json() for r in self.run_scales],
        }


@dataclass(frozen=True)
class SuiteHistory:
    """A suite's history: one series per benchmark, each with its own change points."""

    range_text: str
    metric: Metric
    threshold: float
    series: tuple[HistoryResult, ...]  # in the suite's order
    measured_now: int  # the commits measured by this history (for every benchmark at once)
    seconds: float
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> tuple[HistoryResult, ...]:
        """The series with a change point."""
        return tuple(s for s in self.series if s.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "range": self.range_text,
            "metric": str(self.metric),
            "threshold": self.threshold,
            "series": [s.to_json() for s in self.series],
            "measured_now": self.measured_now,
            "seconds": self.seconds,
            "notes": list(self.notes),
        }
