"""bisect's search over a repository's history, with git and the runs scripted: which commits
it measures, the culprit it names, merges it goes inside, and a commit that cannot be measured."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from perflab.git.repo import GitError
from perflab.machine.proc import FakeRunner
from perflab.records.bisect import BisectResult, BisectStep, StepState
from perflab.workflows import Benchmarked, bisect
from tests.fake_git import FakeRepository
from tests.scripted_runs import ScriptedRuns


def _benchmarked(repo: FakeRepository, runs: ScriptedRuns) -> Benchmarked:
    runner = FakeRunner().on_run(r"^git ", repo)
    return Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)


def _bisected(
    repo: FakeRepository, figures: Mapping[str, float | None], good: str, bad: str
) -> tuple[list[BisectStep], ScriptedRuns, BisectResult]:
    runs = ScriptedRuns(figures)
    steps: list[BisectStep] = []
    result = bisect(
        good, bad, benchmark=_benchmarked(repo, runs), metric="time", repository=repo.path,
        on_step=lambda step, _: steps.append(step),
    )  # fmt: skip
    return steps, runs, result


def test_the_first_slower_commit_is_found_by_halving_the_line() -> None:
    repo = FakeRepository()
    good, a, b, slow, d, e, bad = repo.line("good", "a", "b", "slow", "d", "e", "bad")
    figures = dict.fromkeys((good, a, b), 100.0) | dict.fromkeys((slow, d, e, bad), 110.0)
    steps, runs, result = _bisected(repo, figures, good, bad[:10])
    assert result.culprit is not None and result.culprit.commit == slow
    assert result.parent is not None and result.parent.commit == b
    # a binary search: fewer steps than commits, each against GOOD, the bad ones slower
    measured = [s.commit for s in steps]
    assert len(measured) < 6 and slow in measured and b in measured
    assert all(
        s.outcome.state is (StepState.BAD if figures[s.commit] == 110.0 else StepState.GOOD)
        for s in steps
    )
    # the steps, then the culprit against its parent as evidence
    evidence = runs.experiments[-1]
    assert [(v.name, v.git) for v in evidence.variants] == [("parent", b), ("culprit", slow)]
    assert result.evidence_run == len(runs.experiments)


def test_a_faster_change_is_found_when_faster_is_sought() -> None:
    repo = FakeRepository()
    good, a, fast, bad = repo.line("good", "a", "fast", "bad")
    runs = ScriptedRuns({good: 100.0, a: 100.0, fast: 80.0, bad: 80.0})
    result = bisect(
        good, bad, benchmark=_benchmarked(repo, runs), metric="time", direction="faster",
        repository=repo.path,
    )  # fmt: skip
    assert result.culprit is not None and result.culprit.commit == fast


def test_a_merge_found_guilty_is_searched_inside() -> None:
    repo = FakeRepository()
    good, a = repo.line("good", "a")
    fine = repo.commit("branch: fine", parents=(a,))
    slow = repo.commit("branch: slow", parents=(fine,))
    merge = repo.commit("merge the branch", parents=(a, slow))
    bad = repo.commit("bad", parents=(merge,))
    figures = {good: 100.0, a: 100.0, fine: 100.0, slow: 120.0, merge: 120.0, bad: 120.0}
    steps, _, result = _bisected(repo, figures, good, bad)
    assert result.culprit is not None and result.culprit.commit == slow
    assert [m.commit for m in result.merges] == [merge]
    assert any(s.inside == merge for s in steps), "the branch's steps say which merge"


def test_a_commit_that_cannot_be_measured_is_skipped_and_leaves_candidates() -> None:
    repo = FakeRepository()
    good, a, crashed, slow, bad = repo.line("good", "a", "crashed", "slow", "bad")
    figures = {good: 100.0, a: 100.0, crashed: None, slow: 110.0, bad: 110.0}
    steps, _, result = _bisected(repo, figures, good, bad)
    skipped = [s for s in steps if s.outcome.state is StepState.SKIPPED]
    assert [s.commit for s in skipped] == [crashed]
    assert "crashed" in skipped[0].outcome.reason
    # the first slower commit is the crashed one or the next: both stay candidates
    assert result.culprit is None
    assert [c.commit for c in result.candidates] == [crashed, slow]


def test_a_good_commit_that_cannot_be_measured_stops_the_search_with_a_hint() -> None:
    repo = FakeRepository()
    good, bad = repo.line("good", "bad")
    with pytest.raises(GitError, match="GOOD .* could not be measured") as raised:
        _bisected(repo, {good: None, bad: 100.0}, good, bad)
    assert raised.value.hint is not None and "perflab show 1" in raised.value.hint


def test_the_refs_are_resolved_in_the_repository_given() -> None:
    repo = FakeRepository(path="/elsewhere")
    good, bad = repo.line("good", "bad")
    repo.refs["v1.0"] = good
    _, _, result = _bisected(repo, {good: 100.0, bad: 150.0}, "v1.0", "HEAD")
    assert result.good.commit == good and result.bad.commit == bad
    assert result.culprit is not None and result.culprit.commit == bad
