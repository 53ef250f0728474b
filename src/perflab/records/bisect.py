"""What a bisection found, as data: each step's outcome, the commits on the line, and the answer
(bisection/search.py searches; the bisect workflow fills these in)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from perflab.records.kinds import Metric
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.results import RunResult


class StepState(enum.StrEnum):
    """What one bisection step found of its commit against GOOD."""

    GOOD = "good"  # not worse than GOOD by more than the threshold
    BAD = "bad"  # worse than GOOD by more than the threshold
    SKIPPED = "skipped"  # could not be measured (its build failed ...)
    INCONCLUSIVE = "inconclusive"  # the CI straddles the threshold, even after measuring more


class Direction(enum.StrEnum):
    """The change a bisection looks for (`--faster`, `--changed`; slower by default)."""

    SLOWER = "slower"  # the ratio's whole CI above 1 + threshold
    FASTER = "faster"  # the ratio's whole CI below 1 / (1 + threshold)
    CHANGED = "changed"  # either


@dataclass(frozen=True)
class StepOutcome:
    """One commit measured against GOOD: its state and the ratio it rests on."""

    state: StepState
    ratio: float | None = None  # the commit / GOOD
    ci_low: float | None = None
    ci_high: float | None = None
    run_id: int | None = None
    reason: str = ""  # why a step was skipped
    reused: bool = False  # read from a run the store held already, not measured again


@dataclass(frozen=True)
class BisectStep:
    """One commit a bisection measured, where it sits on the line, and what it found."""

    index: int  # place on the first-parent line after GOOD (0 = the first commit after GOOD)
    commit: str
    subject: str
    outcome: StepOutcome
    attempts: int = 1
    # the merge whose branch this step's line is (its second parent's line); "": BAD's own line
    inside: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "subject": self.subject,
            "index": self.index,
            "state": str(self.outcome.state),
            "ratio": self.outcome.ratio,
            "ci_low": self.outcome.ci_low,
            "ci_high": self.outcome.ci_high,
            "run_id": self.outcome.run_id,
            "attempts": self.attempts,
            "reason": self.outcome.reason or None,
            "inside": self.inside or None,
            "reused": self.outcome.reused,
        }


@dataclass(frozen=True)
class Commit:
    """A commit by its hash and subject line."""

    commit: str
    subject: str

    @property
    def short(self) -> str:
        return self.commit[:10]


class EvidenceSource(enum.StrEnum):
    """Where a run of the culprit against its parent came from."""

    MEASURED = "measured"  # measured for the evidence
    SEARCH = "search"  # a step of this bisection compared the same two commits
    STORE = "store"  # the store held it from an earlier run


@dataclass(frozen=True)
class EvidenceRun:
    """One run the evidence (the culprit against its parent) is read from, and its lenses
    that the evidence reads: a run reused holds some lenses, one measured now the rest."""

    run_id: int
    metrics: tuple[Metric, ...]
    source: EvidenceSource = EvidenceSource.MEASURED

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "metrics": [str(m) for m in self.metrics],
            "source": str(self.source),
        }


@dataclass(frozen=True)
class SearchOutcome:
    """Where a bisection's search ended: its steps and the culprit, or the candidates left."""

    steps: tuple[BisectStep, ...]
    culprit: int | None  # index of the first bad commit, when narrowed to one
    candidates: tuple[int, ...]  # what is left when not narrowed to one
    stopped: str = ""  # why the search stopped without a culprit


@dataclass(frozen=True)
class BisectResult:
    """A bisection's answer: the first commit between GOOD and BAD with the change sought, and
    every step measured to find it."""

    good: Commit
    bad: Commit
    metric: Metric
    threshold: float
    line: tuple[Commit, ...]  # the first-parent line after GOOD, oldest first; BAD last
    steps: tuple[BisectStep, ...]  # every step in the order measured, inside merges too
    culprit: Commit | None  # the answer: the innermost first commit with the change sought
    candidates: tuple[Commit, ...]
    stopped: str
    seconds: float
    evidence_run: int | None = None  # the culprit against its first parent, with explanations
    notes: tuple[str, ...] = field(default=())
    evidence: RunResult | None = field(default=None, compare=False, repr=False)
    # a lens of the evidence (the culprit against its parent) that disagrees with `metric`
    disagreement: LensDisagreement | None = None
    direction: Direction = Direction.SLOWER  # the change sought
    merges: tuple[Commit, ...] = ()  # the merges the search went inside, outermost first
    # why the search could not go inside the innermost merge found, and how to by hand
    not_inside: str = ""
    parent: Commit | None = None  # the culprit's first parent, compared with it for evidence
    benchmark: str | None = None  # the suite's benchmark followed (None: not a suite)
    # every run the evidence is read from, `evidence_run` first (it holds the deciding lens)
    evidence_runs: tuple[EvidenceRun, ...] = ()
    # the evidence's runs after `evidence`, in the order of `evidence_runs`
    more_evidence: tuple[RunResult, ...] = field(default=(), compare=False, repr=False)

    @property
    def first_parent_culprit(self) -> Commit | None:
        """The first commit with the change on BAD's first-parent line (a merge, when the
        search went inside one)."""
        return self.merges[0] if self.merges else self.culprit

    @property
    def measured_commits(self) -> int:
        """Distinct commits measured, GOOD included (and the culprit's parent for the
        evidence, when that is not GOOD or a step already)."""
        seen = {self.good.commit} | {s.commit for s in self.steps}
        if self.evidence_run is not None and self.parent is not None:
            seen.add(self.parent.commit)
        return len(seen)

    def answer(self) -> str:
        """The answer in one line: the commit found (inside which merges), or why none."""
        if self.culprit is not None:
            words = (
                f"first {self.direction} commit"
                if self.direction is not Direction.SLOWER
                else "first bad commit"
            )
            inside = "".join(f" (inside {m.short} {m.subject})" for m in reversed(self.merges))
            return f"{words}: {self.culprit.short} {self.culprit.subject}{inside}"
        if self.candidates:
            left = ", ".join(f"{c.short} {c.subject}" for c in self.candidates)
            return f"the first bad commit is one of: {left}"
        return f"no commit found: {self.stopped}"

    def to_json(self) -> dict[str, Any]:
        def commit(c: Commit | None) -> dict[str, str] | None:
            return {"commit": c.commit, "subject": c.subject} if c is not None else None

        return {
            "answer": self.answer(),
            "culprit": commit(self.culprit),
            "first_parent_culprit": commit(self.first_parent_culprit),
            "merges": [commit(m) for m in self.merges],
            "not_inside": self.not_inside or None,
            "direction": str(self.direction),
            "good": commit(self.good),
            "bad": commit(self.bad),
            "metric": str(self.metric),
            "threshold": self.threshold,
            "commits_in_line": len(self.line),
            "measured_commits": self.measured_commits,
            "measured_now": sum(not s.outcome.reused for s in self.steps),
            "steps": [s.to_json() for s in self.steps],
            "candidates": [{"commit": c.commit, "subject": c.subject} for c in self.candidates],
            "stopped": self.stopped or None,
            "seconds": self.seconds,
            "evidence_run": self.evidence_run,
            "evidence_runs": [r.to_json() for r in self.evidence_runs],
            "parent": commit(self.parent),
            "notes": list(self.notes),
            "disagreement": self.disagreement.to_json() if self.disagreement else None,
            "benchmark": self.benchmark,
        }
