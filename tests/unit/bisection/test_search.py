"""The binary search of `perflab bisect`, with a fake measurement: how many steps, skipped
commits, inconclusive steps measured again, and never a guess."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from perflab.bisection.search import search
from perflab.records.bisect import Commit, Direction, StepOutcome, StepState


def line(n: int) -> list[Commit]:
    return [Commit(f"{i:040x}", f"commit {i}") for i in range(n)]


Measure = Callable[[int, int], StepOutcome]


def fake(
    culprit: int, *, skipped: frozenset[int] = frozenset(), unsure: dict[int, int] | None = None
) -> tuple[Measure, list[tuple[int, int]]]:
    calls: list[tuple[int, int]] = []
    unsure = unsure or {}

    def measure(index: int, attempt: int) -> StepOutcome:
        calls.append((index, attempt))
        if index in skipped:
            return StepOutcome(StepState.SKIPPED, reason="the build failed")
        if attempt <= unsure.get(index, 0):
            return StepOutcome(StepState.INCONCLUSIVE, 1.02, 0.99, 1.05)
        bad = index >= culprit
        return StepOutcome(StepState.BAD if bad else StepState.GOOD, 1.5 if bad else 1.0)

    return measure, calls


@pytest.mark.parametrize("culprit", [0, 1, 17, 40, 63])
def test_a_binary_search_measures_about_log2_commits(culprit: int) -> None:
    measure, calls = fake(culprit)
    found = search(line(64), measure)
    assert found.culprit == culprit and not found.candidates
    assert len(calls) <= 7  # BAD, then log2(64) = 6 halvings
    assert calls[0] == (63, 1)  # BAD is confirmed first


def test_skipped_commits_are_stepped_around_and_named_when_they_hide_the_culprit() -> None:
    measure, calls = fake(5, skipped=frozenset({3}))
    assert search(line(8), measure).culprit == 5
    measure, calls = fake(5, skipped=frozenset({4}))
    found = search(line(8), measure)
    assert found.culprit is None
    assert found.candidates == (4, 5)  # like git bisect skip: one of these
    assert "could not be measured" in found.stopped


def test_an_inconclusive_step_is_measured_again_and_never_guessed() -> None:
    measure, calls = fake(5, unsure={3: 1})
    found = search(line(8), measure)
    assert found.culprit == 5
    assert (3, 1) in calls and (3, 2) in calls  # measured again with more budget
    (step,) = [s for s in found.steps if s.index == 3]
    assert step.attempts == 2 and step.outcome.state is StepState.GOOD
    measure, calls = fake(5, unsure={3: 99})
    found = search(line(8), measure, max_attempts=3)
    assert found.culprit is None and "inconclusive" in found.stopped
    assert found.candidates == tuple(range(found.candidates[0], 8))
    assert [a for i, a in calls if i == 3] == [1, 2, 3]


def test_no_regression_between_good_and_bad_stops_after_one_step() -> None:
    measure, calls = fake(99)
    found = search(line(8), measure)
    assert found.culprit is None and len(calls) == 1
    assert "not worse than GOOD" in found.stopped


def test_bad_that_is_not_the_change_sought_says_which_change_was_sought() -> None:
    line = [Commit(f"{i:040d}", f"c{i}") for i in range(4)]
    found = search(line, lambda i, a: StepOutcome(StepState.GOOD, 0.9), direction=Direction.FASTER)
    assert found.culprit is None and found.stopped == (
        "BAD is not faster than GOOD by more than the threshold"
    )
