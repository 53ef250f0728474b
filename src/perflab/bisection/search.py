"""Find the commit: a binary search over the first-parent line from GOOD to BAD for the first
commit where a benchmark got worse than GOOD by more than a threshold.

Each step is an honest comparison (an interleaved experiment of GOOD and the commit, kept in
the store): a step is `bad` when the ratio's whole CI lies above 1 + threshold, `good` when it
lies at or below it, and otherwise measured again with a larger budget; a step still
`inconclusive` stops the search with the range it narrowed so far (never a guess). A commit
that does not build is skipped, as `git bisect skip` does, and named. The search is a pure
function of a `measure` callable, so it is tested without git; a step's outcome is judged by
threshold.py's `classify`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from perflab.records.bisect import (
    BisectStep,
    Commit,
    Direction,
    SearchOutcome,
    StepOutcome,
    StepState,
)

MAX_ATTEMPTS = 3  # budgets x1, x2, x4 for an inconclusive step, then the search stops


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
