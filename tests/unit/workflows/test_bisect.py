"""bisect's search over a repository's history, with git and the runs scripted: which commits
it measures, the culprit it names, merges it goes inside, and a commit that cannot be measured."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from perflab.git.repo import GitError
from perflab.machine.fake_processes import FakeRunner
from perflab.records.bisect import (
    BisectResult,
    BisectStep,
    EvidenceRun,
    EvidenceSource,
    StepState,
)
from perflab.records.kinds import Metric
from perflab.workflows import Benchmarked, WorkflowServices, bisect, bisect_with
from tests.support.fake_git import FakeRepository
from tests.support.scripted_runs import ScriptedRuns


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


def _first_commit_slower(
    tmp_path: Path | None, monkeypatch: pytest.MonkeyPatch, *, valgrind: bool
) -> tuple[list[str], ScriptedRuns, BisectResult]:
    """GOOD, then the slower commit, then BAD: the search's last step compares the culprit
    with GOOD, which is its parent. `tmp_path`: a store (never written by the scripted runs:
    what a step measured is kept in memory); None: no store."""
    monkeypatch.setattr("perflab.workflows.benchmarked.instructions_available", lambda: valgrind)
    repo = FakeRepository()
    good, slow, bad = repo.line("good", "slow", "bad")
    runs = ScriptedRuns({good: 100.0, slow: 120.0, bad: 120.0})
    benchmark = replace(
        _benchmarked(repo, runs), store_path=None if tmp_path is None else tmp_path / "p.db"
    )
    result = bisect(good, bad, benchmark=benchmark, metric="time", repository=repo.path)
    assert result.culprit is not None and result.culprit.commit == slow
    assert result.parent is not None and result.parent.commit == good
    return [good, slow], runs, result


def test_the_evidence_is_the_last_step_when_it_holds_every_lens_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (_, slow), runs, result = _first_commit_slower(tmp_path, monkeypatch, valgrind=False)
    # time alone is needed (no valgrind): the step of the culprit against GOOD answers it
    assert len(runs.experiments) == len(result.steps)
    (last,) = [s for s in result.steps if s.commit == slow]
    assert last.outcome.run_id is not None
    assert result.evidence_run == last.outcome.run_id
    assert result.evidence_runs == (
        EvidenceRun(last.outcome.run_id, (Metric.TIME,), EvidenceSource.SEARCH),
    )
    assert result.evidence is not None and result.evidence.run_id == last.outcome.run_id
    assert result.to_json()["evidence_runs"] == [
        {"run_id": last.outcome.run_id, "metrics": ["time"], "source": "search"}
    ]


def test_the_evidence_measures_only_the_lens_the_last_step_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (good, slow), runs, result = _first_commit_slower(tmp_path, monkeypatch, valgrind=True)
    # time and instructions are needed: the step measured time, one more run instructions
    assert len(runs.experiments) == len(result.steps) + 1
    extra = runs.experiments[-1]
    assert extra.settings.metrics == (Metric.INSTRUCTIONS,)
    # named as the step's variants, so the two runs' comparisons read as one pair
    assert [(v.name, v.git) for v in extra.variants] == [("good", good), (slow[:10], slow)]
    (last,) = [s for s in result.steps if s.commit == slow]
    assert last.outcome.run_id is not None
    assert result.evidence_runs == (
        EvidenceRun(last.outcome.run_id, (Metric.TIME,), EvidenceSource.SEARCH),
        EvidenceRun(len(runs.experiments), (Metric.INSTRUCTIONS,), EvidenceSource.MEASURED),
    )
    assert result.evidence_run == last.outcome.run_id
    assert [r.run_id for r in result.more_evidence] == [len(runs.experiments)]


def test_a_bisection_without_a_store_measures_its_evidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no store holds the step's run: nothing is claimed reused
    (good, slow), runs, result = _first_commit_slower(None, monkeypatch, valgrind=False)
    assert len(runs.experiments) == len(result.steps) + 1
    evidence = runs.experiments[-1]
    assert [(v.name, v.git) for v in evidence.variants] == [("parent", good), ("culprit", slow)]
    assert result.evidence_runs == (EvidenceRun(len(runs.experiments), (Metric.TIME,)),)


def test_bisect_with_services_hears_each_step_and_times_by_their_clock() -> None:
    repo = FakeRepository()
    good, slow, bad = repo.line("good", "slow", "bad")
    runs = ScriptedRuns({good: 100.0, slow: 110.0, bad: 110.0})
    heard: list[tuple[str, int]] = []
    ticks = iter((10.0, 12.5))
    services = WorkflowServices(
        repository=repo.path,
        clock=lambda: next(ticks),
        on_step=lambda step, total: heard.append((step.commit, total)),
    )
    result = bisect_with(
        good, bad, benchmark=_benchmarked(repo, runs), services=services, metric="time"
    )
    assert result.culprit is not None and result.culprit.commit == slow
    assert heard and all(total == 2 for _, total in heard)
    assert result.seconds == 2.5
