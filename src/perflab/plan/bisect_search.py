"""Find the commit: a binary search over the first-parent line from GOOD to BAD for the first
commit where a benchmark got worse than GOOD by more than a threshold.

Each step is an honest comparison (an interleaved experiment of GOOD and the commit, kept in
the store): a step is `bad` when the ratio's whole CI lies above 1 + threshold, `good` when it
lies at or below it, and otherwise measured again with a larger budget; a step still
`inconclusive` stops the search with the range it narrowed so far (never a guess). A commit
that does not build is skipped, as `git bisect skip` does, and named. The search is a pure
function of a `measure` callable, so it is tested without git.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from perflab.records.errors import ConfigError
from perflab.records.model import Comparison, Metric, Verdict

if TYPE_CHECKING:
    from perflab.records.results import RunResult

MAX_ATTEMPTS = 3  # budgets x1, x2, x4 for an inconclusive step, then the search stops


class StepState(enum.StrEnum):
    GOOD = "good"  # not worse than GOOD by more than the threshold
    BAD = "bad"  # worse than GOOD by more than the threshold
    SKIPPED = "skipped"  # could not be measured (its build failed ...)
    INCONCLUSIVE = "inconclusive"  # the CI straddles the threshold, even after measuring more


@dataclass(frozen=True)
class StepOutcome:
    state: StepState
    ratio: float | None = None  # the commit / GOOD
    ci_low: float | None = None
    ci_high: float | None = None
    run_id: int | None = None
    reason: str = ""  # why a step was skipped


@dataclass(frozen=True)
class BisectStep:
    index: int  # place on the first-parent line after GOOD (0 = the first commit after GOOD)
    commit: str
    subject: str
    outcome: StepOutcome
    attempts: int = 1

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
        }


@dataclass(frozen=True)
class Commit:
    commit: str
    subject: str

    @property
    def short(self) -> str:
        return self.commit[:10]


@dataclass(frozen=True)
class SearchOutcome:
    steps: tuple[BisectStep, ...]
    culprit: int | None  # index of the first bad commit, when narrowed to one
    candidates: tuple[int, ...]  # what is left when not narrowed to one
    stopped: str = ""  # why the search stopped without a culprit


@dataclass(frozen=True)
class BisectResult:
    good: Commit
    bad: Commit
    metric: Metric
    threshold: float
    line: tuple[Commit, ...]  # the first-parent line after GOOD, oldest first; BAD last
    steps: tuple[BisectStep, ...]
    culprit: Commit | None
    candidates: tuple[Commit, ...]
    stopped: str
    seconds: float
    evidence_run: int | None = None  # the culprit against its first parent, with explanations
    notes: tuple[str, ...] = field(default=())
    evidence: RunResult | None = field(default=None, compare=False, repr=False)

    @property
    def measured_commits(self) -> int:
        """Distinct commits measured, GOOD included (and the culprit's parent for the
        evidence, when that is not GOOD or a step already)."""
        seen = {self.good.commit} | {s.commit for s in self.steps}
        if self.evidence_run is not None and self.culprit is not None:
            index = [c.commit for c in self.line].index(self.culprit.commit)
            seen.add(self.line[index - 1].commit if index > 0 else self.good.commit)
        return len(seen)

    def to_json(self) -> dict[str, Any]:
        return {
            "good": {"commit": self.good.commit, "subject": self.good.subject},
            "bad": {"commit": self.bad.commit, "subject": self.bad.subject},
            "metric": str(self.metric),
            "threshold": self.threshold,
            "commits_in_line": len(self.line),
            "measured_commits": self.measured_commits,
            "steps": [s.to_json() for s in self.steps],
            "culprit": (
                {"commit": self.culprit.commit, "subject": self.culprit.subject}
                if self.culprit
                else None
            ),
            "candidates": [{"commit": c.commit, "subject": c.subject} for c in self.candidates],
            "stopped": self.stopped or None,
            "seconds": self.seconds,
            "evidence_run": self.evidence_run,
            "notes": list(self.notes),
        }


_NUMBER = re.compile(r"^\s*(\S+?)\s*(%?)\s*$")
# a smaller step than 0.01% is below what any lens resolves between two builds: such a
# threshold would call every difference a regression
SMALLEST_THRESHOLD = 0.0001
_ACCEPTED = "a percentage from 0.01% (--threshold 2%) or a fraction below 1 (--threshold 0.02)"


def parse_threshold(text: str) -> float:
    """`2%` or `0.02` -> 0.02; a bare number of 1 or more is refused as ambiguous, a negative
    one or one below 0.01% as meaningless."""
    found = _NUMBER.match(text)
    try:
        value = float(found.group(1)) if found else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError(f"the threshold {text!r} is not a number", hint=f"give {_ACCEPTED}")
    assert found is not None
    if found.group(2):
        value /= 100.0
    elif value >= 1:
        raise ConfigError(
            f"the threshold {text!r} is ambiguous (a fraction of 1 or more)",
            hint=f"write it as a percentage: --threshold {found.group(1)}%",
        )
    if value < 0:
        raise ConfigError(
            f"the threshold {text!r} is negative: it is how much worse counts as a regression",
            hint=f"give {_ACCEPTED}",
        )
    if value < SMALLEST_THRESHOLD:
        raise ConfigError(
            f"the threshold {text!r} must be above 0"
            if value == 0
            else f"the threshold {text!r} is too small: below 0.01%, every difference counts",
            hint=f"give {_ACCEPTED}",
        )
    return value


def classify(comparisons: Sequence[Comparison], threshold: float) -> StepOutcome | None:
    """What the comparisons of one step (the commit against GOOD, one metric, every benchmark)
    say: bad when one benchmark's whole CI is above 1 + threshold, good when every one is at
    or below it, else inconclusive. None when there is no comparison (nothing measured)."""
    main = [c for c in comparisons if c.verdict is not Verdict.INVALID]
    if not main:
        return None
    limit = 1.0 + threshold
    worst = max(main, key=lambda c: c.ci_low)
    if worst.ci_low > limit:
        state = StepState.BAD
    elif all(c.ci_high <= limit for c in main):
        state = StepState.GOOD
    else:
        state = StepState.INCONCLUSIVE
    shown = worst if state is StepState.BAD else max(main, key=lambda c: c.ratio)
    return StepOutcome(state, shown.ratio, shown.ci_low, shown.ci_high)


# why the search stops at once when BAD's own step is not `bad`
_BAD_IS_NOT_BAD = {
    StepState.SKIPPED: "BAD itself could not be measured",
    StepState.GOOD: "BAD is not worse than GOOD by more than the threshold",
    StepState.INCONCLUSIVE: "BAD against GOOD stayed inconclusive after measuring more",
}


def search(
    line: Sequence[Commit],
    measure: Callable[[int, int], StepOutcome],
    *,
    max_attempts: int = MAX_ATTEMPTS,
) -> SearchOutcome:
    """Binary search over `line` (GOOD is before index 0; the last commit is BAD, whose step
    is measured first to confirm there is a regression). `measure(index, attempt)` compares
    the commit at `index` with GOOD, with a budget growing with `attempt` (1, 2, ...)."""
    steps: list[BisectStep] = []

    def step(index: int) -> StepOutcome:
        steps.append(_measured_step(line, measure, index, max_attempts))
        return steps[-1].outcome

    last = len(line) - 1
    first = step(last)
    if first.state in _BAD_IS_NOT_BAD:
        return SearchOutcome(tuple(steps), None, (), _BAD_IS_NOT_BAD[first.state])
    low, high = -1, last  # low: known good (GOOD itself at -1); high: known bad
    skipped: set[int] = set()
    while open_ := [i for i in range(low + 1, high) if i not in skipped]:
        middle = (low + high) // 2
        index = min(open_, key=lambda i: (abs(i - middle), i))
        outcome = step(index)
        if outcome.state is StepState.BAD:
            high = index
        elif outcome.state is StepState.GOOD:
            low = index
        elif outcome.state is StepState.SKIPPED:
            skipped.add(index)
        else:
            left = tuple(range(low + 1, high + 1))
            return SearchOutcome(
                tuple(steps),
                None,
                left,
                f"{line[index].short} stayed inconclusive after measuring {max_attempts} times "
                "as much; the first bad commit is one of those left",
            )
    return _narrowed(tuple(steps), low, high, skipped)


def _measured_step(
    line: Sequence[Commit],
    measure: Callable[[int, int], StepOutcome],
    index: int,
    max_attempts: int,
) -> BisectStep:
    """The commit at `index` measured, again with more budget while it is inconclusive."""
    for attempt in range(1, max_attempts + 1):
        outcome = measure(index, attempt)
        if outcome.state is not StepState.INCONCLUSIVE or attempt == max_attempts:
            break
    commit = line[index]
    return BisectStep(index, commit.commit, commit.subject, outcome, attempt)


def _narrowed(
    steps: tuple[BisectStep, ...], low: int, high: int, skipped: set[int]
) -> SearchOutcome:
    """`high` is the first bad commit unless commits that could not be measured lie between
    it and the last good one."""
    left = tuple(i for i in range(low + 1, high) if i in skipped)
    if left:
        return SearchOutcome(
            steps,
            None,
            (*left, high),
            "commits that could not be measured lie just before the first bad one: it is one "
            "of those left",
        )
    return SearchOutcome(steps, high, ())
