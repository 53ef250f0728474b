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

import math
import re
from collections.abc import Callable, Sequence

from perflab.records.bisect import (
    BisectStep,
    Commit,
    Direction,
    SearchOutcome,
    StepOutcome,
    StepState,
)
from perflab.records.errors import ConfigError
from perflab.records.kinds import Verdict
from perflab.records.model import Comparison

MAX_ATTEMPTS = 3  # budgets x1, x2, x4 for an inconclusive step, then the search stops


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


def classify(
    comparisons: Sequence[Comparison], threshold: float, direction: Direction = Direction.SLOWER
) -> StepOutcome | None:
    """What the comparisons of one step (the commit against GOOD, one metric, every benchmark)
    say: bad when one benchmark's whole CI lies beyond the threshold in `direction`, good when
    no benchmark's CI reaches beyond it, else inconclusive. None when there is no comparison
    (nothing measured)."""
    main = [c for c in comparisons if c.verdict is not Verdict.INVALID]
    if not main:
        return None
    ways = (Direction.SLOWER, Direction.FASTER) if direction is Direction.CHANGED else (direction,)
    limit = 1.0 + threshold
    wholly = [c for c in main if any(_beyond(c, limit, way)[0] for way in ways)]
    if wholly:
        state = StepState.BAD
    elif not any(_beyond(c, limit, way)[1] for c in main for way in ways):
        state = StepState.GOOD
    else:
        state = StepState.INCONCLUSIVE
    shown = max(wholly or main, key=lambda c: _toward(c.ratio, direction))
    return StepOutcome(state, shown.ratio, shown.ci_low, shown.ci_high)


def _beyond(c: Comparison, limit: float, way: Direction) -> tuple[bool, bool]:
    """Whether the ratio's CI lies wholly, and partly, beyond the threshold `way`."""
    if way is Direction.SLOWER:
        return c.ci_low > limit, c.ci_high > limit
    return c.ci_high < 1.0 / limit, c.ci_low < 1.0 / limit


def _toward(ratio: float, direction: Direction) -> float:
    """How far a ratio lies in the direction sought (the step shows its furthest benchmark)."""
    distance = math.log(ratio) if ratio > 0 else -math.inf
    if direction is Direction.FASTER:
        return -distance
    return abs(distance) if direction is Direction.CHANGED else distance


def direction_words(direction: Direction, threshold: float) -> str:
    """The change sought, in words: "slower by more than 2.0%"."""
    if direction is Direction.CHANGED:
        return f"changed by more than {threshold:.1%}"
    return f"{direction} by more than {threshold:.1%}"


# why the search stops at once when BAD's own step is not `bad`
_BAD_IS_NOT_BAD = {
    StepState.SKIPPED: "BAD itself could not be measured",
    StepState.INCONCLUSIVE: "BAD against GOOD stayed inconclusive after measuring more",
}
_NOT_SOUGHT = {
    Direction.SLOWER: "BAD is not worse than GOOD by more than the threshold",
    Direction.FASTER: "BAD is not faster than GOOD by more than the threshold",
    Direction.CHANGED: "BAD does not differ from GOOD by more than the threshold",
}


def search(
    line: Sequence[Commit],
    measure: Callable[[int, int], StepOutcome],
    *,
    max_attempts: int = MAX_ATTEMPTS,
    direction: Direction = Direction.SLOWER,
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
    if first.state is not StepState.BAD:
        why = _BAD_IS_NOT_BAD.get(first.state) or _NOT_SOUGHT[direction]
        return SearchOutcome(tuple(steps), None, (), why)
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
