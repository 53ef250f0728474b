"""First-parent stacks, merges as matrix changes and `perflab bisect`, on a repository with
merged pull requests made here (tests/support/merged_repo.py), measured with the
instructions lens: a known culprit (a merge), a neutral merge, a build that fails on one
commit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perflab import api
from perflab.git.repo import GitError
from perflab.records.bisect import StepState
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.results import RunResult
from perflab.report.workflow_formats import check_markdown, history_html
from perflab.workflows import Benchmarked, bisect, check, history
from tests.support.merged_repo import (
    BUILD,
    CULPRIT_SUBJECT,
    NEUTRAL_MERGE_SUBJECT,
    first_parent_line,
    git,
    make_merged_repo,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
        reason="needs valgrind, cc and git",
    ),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_merged_repo(tmp_path_factory.mktemp("merged") / "repo")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache for the module: a commit is built once, whichever test needs it."""
    return tmp_path_factory.mktemp("cache")


def instructions(result: RunResult, baseline: str, variant: str) -> Verdict:
    (found,) = [
        c
        for c in result.comparisons
        if c.metric is Metric.INSTRUCTIONS
        and c.event is None
        and (c.baseline, c.variant) == (baseline, variant)
    ]
    return found.verdict


def test_a_range_with_merges_is_a_first_parent_stack(repo: Path, cache: Path) -> None:
    line = first_parent_line(repo)
    experiment = api.make_stack(
        "good..main~5",  # the README, the neutral merge, a tidy commit
        repository=repo,
        cmd="./prog",
        build=BUILD,
        metrics="instructions",
    )
    assert [v.git for v in experiment.variants[1:]] == line[:3]
    (note,) = experiment.plan_notes
    assert "first-parent line (it holds merges)" in note
    assert f"step2 = {line[1][:10]} {NEUTRAL_MERGE_SUBJECT!r}" in note
    result = api.run(experiment, store_path=None, cache_dir=cache)
    assert not result.failures
    assert instructions(result, "step1", "step2") is Verdict.EQUIVALENT  # the neutral merge
    assert any(n.message == note for n in result.notes)  # kept with the run

    # the culprit merge, against its first parent: the effect of the whole pull request
    experiment = api.make_stack(
        "main~3..main~1",
        repository=repo,
        cmd="./prog",
        build=BUILD,
        metrics="instructions",
        first_parent=True,
    )
    result = api.run(experiment, store_path=None, cache_dir=cache)
    assert instructions(result, "base", "step1") is Verdict.SLOWER
    assert instructions(result, "step1", "step2") is Verdict.EQUIVALENT
    assert result.variant_info["step1"].provenance["subject"] == CULPRIT_SUBJECT
    with pytest.raises(ConfigError, match="merge commits"):
        api.make_stack("good..main", repository=repo, cmd="./prog", first_parent=False)


def test_a_merge_is_a_matrix_change(repo: Path, cache: Path) -> None:
    culprit = first_parent_line(repo)[5]
    experiment = api.make_matrix(
        ["main~3"],
        [culprit],
        repository=repo,
        cmd="./prog",
        build=BUILD,
        metrics="instructions",
    )
    result = api.run(experiment, store_path=None, cache_dir=cache)
    assert not result.failures
    cell = experiment.variants[1].name
    # its diff to its first parent: the whole pull request
    assert instructions(result, "main-3", cell) is Verdict.SLOWER


def test_bisect_finds_the_merge_skips_the_broken_build_and_keeps_every_step(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    line = first_parent_line(repo)
    before = git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD")
    store = tmp_path / "p.db"
    said: list[int] = []
    result = bisect(
        "good",
        "main",
        benchmark=Benchmarked(
            cmd="./prog",
            build=BUILD,
            settings={},
            store_path=store,
            cache_dir=cache,
        ),
        threshold=0.02,
        repository=repo,
        on_step=lambda step, total: said.append(step.index),
    )
    assert (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD")) == before
    assert result.metric is Metric.INSTRUCTIONS  # deterministic first
    # the merge on the first-parent line, then the commit inside the branch it merged
    assert [m.commit for m in result.merges] == [line[5]]
    assert result.merges[0].subject == CULPRIT_SUBJECT
    assert result.culprit is not None and result.culprit.subject == "a second loop"
    assert result.culprit.commit == git(repo, "rev-parse", f"{line[5]}^2~1")
    assert result.parent is not None and result.parent.commit == line[4]  # the merge base
    skipped = [s for s in result.steps if s.outcome.state is StepState.SKIPPED]
    assert [s.subject for s in skipped] == ["break the build"]
    assert "exited with status 1" in skipped[0].outcome.reason
    assert said == [s.index for s in result.steps]
    assert {s.inside for s in result.steps} == {"", line[5]}
    # a binary search: few commits measured, each step a stored run
    assert result.measured_commits < len(line) + 1 + 2
    runs = api.list_runs(store)
    assert {s.outcome.run_id for s in result.steps} | {result.evidence_run} == {
        r.run_id for r in runs
    }
    assert result.evidence is not None
    assert instructions(result.evidence, "parent", "culprit") is Verdict.SLOWER
    document = result.to_json()
    assert document["first_parent_culprit"]["commit"] == line[5]
    assert [s["state"] for s in document["steps"]][0] == "bad"  # BAD confirmed first


def test_bisect_bad_input(repo: Path, cache: Path, tmp_path: Path) -> None:
    benchmark = Benchmarked(
        cmd="./prog",
        build=BUILD,
        settings={},
        store_path=tmp_path / "p.db",
        cache_dir=cache,
    )
    with pytest.raises(ConfigError, match="is not an ancestor of"):
        bisect("main", "good", benchmark=benchmark, repository=repo)
    with pytest.raises(GitError, match="'no-such-ref' does not exist"):
        bisect("no-such-ref", "main", benchmark=benchmark, repository=repo)
    # no regression before the culprit: said, nothing guessed
    quiet = bisect(
        "good", "main~3", benchmark=benchmark, repository=repo, metric=Metric.INSTRUCTIONS
    )
    assert quiet.culprit is None and not quiet.candidates
    assert "not worse than GOOD" in quiet.stopped


def test_check_fails_only_on_a_confirmed_regression_and_writes_the_comment(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    benchmark = Benchmarked(
        cmd="./prog",
        build=BUILD,
        settings={},
        store_path=tmp_path / "p.db",
        cache_dir=cache,
    )
    ci = {"GITHUB_ACTIONS": "true"}
    slower = check("main", head="pr/slower", benchmark=benchmark, repository=repo, environ=ci)
    assert slower.metric is Metric.INSTRUCTIONS  # a shared runner: said why
    assert any("GITHUB_ACTIONS is set" in n for n in slower.notes)
    assert slower.regression and slower.base.commit == git(repo, "rev-parse", "main")
    comment = check_markdown(slower, report_link="https://ci.example/report.html")
    assert comment.startswith("### perflab check: ❌ regression")
    assert "| ./prog | instructions |" in comment and "slower |" in comment
    assert "| main |" in comment  # the top explanation: the function that changed
    assert "(https://ci.example/report.html)" in comment
    docs = check(
        "main",
        head="pr/docs",
        benchmark=benchmark,
        repository=repo,
        environ={},
        metric=Metric.INSTRUCTIONS,
    )
    assert not docs.regression and docs.outcome.state is StepState.GOOD


def test_check_bad_input_names_the_fix(repo: Path, cache: Path, tmp_path: Path) -> None:
    benchmark = Benchmarked(cmd="./prog", build=BUILD, store_path=None, cache_dir=cache)
    with pytest.raises(GitError, match="'origin/main' is not in this clone") as missing:
        check(benchmark=benchmark, repository=repo, environ={"GITHUB_BASE_REF": "main"})
    assert "git fetch origin main" in str(missing.value.hint)
    assert "fetch-depth: 0" in str(missing.value.hint)
    shallow = tmp_path / "shallow"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--branch",
        "pr/slower",
        repo.as_uri(),
        str(shallow),
    )
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    with pytest.raises(GitError, match="no common commit") as unrelated:
        check("origin/main", benchmark=benchmark, repository=shallow, environ={})
    assert "git fetch --unshallow" in str(unrelated.value.hint)
    with pytest.raises(ConfigError, match="no change to check"):
        check("main", head="main", benchmark=benchmark, repository=repo, environ={})


def test_history_finds_the_change_point_and_reuses_what_it_measured(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    line = first_parent_line(repo)
    benchmark = Benchmarked(
        cmd="./prog",
        build=BUILD,
        settings={},
        store_path=tmp_path / "store" / "p.db",
        cache_dir=cache,
    )
    found = history("good..main", benchmark=benchmark, repository=repo)
    assert [p.commit for p in found.points][1:] == line  # the base, then every commit
    (broken,) = [p for p in found.points if p.value is None]
    assert broken.subject == "break the build" and "exited with status 1" in broken.skipped
    (change,) = found.changes
    assert found.points[change.index].subject == CULPRIT_SUBJECT
    assert change.series_ratio > 1.5 and change.confirmed and change.ratio is not None
    assert found.measured_now == 8  # "fix the build" has the tree of "tidy": measured once
    page = history_html(found, change_links={change.index: "c1.html"})
    assert "<svg" in page and 'href="c1.html"' in page and "break the build" in page

    # a nightly run: nothing new is measured again but the commit that did not build
    again = history("good..main", benchmark=benchmark, repository=repo)
    assert again.measured_now == 1
    assert sum(p.reused for p in again.points) == len(again.points) - 1
    assert [c.index for c in again.changes] == [change.index] and again.changes[0].reused
    sparse = history("good..main", benchmark=benchmark, repository=repo, every=3)
    assert [p.commit for p in sparse.points] == [line[1], line[4], line[7]]
    (step,) = sparse.changes  # between "fix the build" and the tip: two commits unmeasured
    assert (step.before.commit, step.after.commit, step.unmeasured_between) == (line[4], line[7], 2)


def test_history_with_no_buildable_commit(repo: Path, cache: Path, tmp_path: Path) -> None:
    benchmark = Benchmarked(cmd="./prog", build="false", store_path=tmp_path / "p.db",
                            cache_dir=cache)  # fmt: skip
    with pytest.raises(BenchmarkFailedError, match="no commit of good..main~5 could be built"):
        history("good..main~5", benchmark=benchmark, repository=repo)
    assert api.list_runs(tmp_path / "p.db")  # what was tried is kept
    with pytest.raises(ConfigError, match="--every"):
        history("good..main", benchmark=benchmark, repository=repo, every=0)


def test_check_measures_the_working_tree(repo: Path, cache: Path, tmp_path: Path) -> None:
    """Without head=, the working tree's uncommitted changes are measured on top of HEAD (the
    user's tree itself is only read)."""
    benchmark = Benchmarked(cmd="./prog", build=BUILD, store_path=None, cache_dir=cache)
    work_h = repo / "work.h"
    committed = work_h.read_text()
    work_h.write_text(committed.replace("EXTRA 200000", "EXTRA 300000"))
    try:
        before = git(repo, "status", "--porcelain")
        dirty = check("main", benchmark=benchmark, repository=repo, environ={},
                      metric=Metric.INSTRUCTIONS)  # fmt: skip
        assert git(repo, "status", "--porcelain") == before
    finally:
        work_h.write_text(committed)
    assert dirty.working_tree and dirty.regression
    assert any("uncommitted changes to tracked files" in n for n in dirty.notes)
    warned = [n for n in dirty.result.notes if "uncommitted changes" in n.message]
    assert all(n.variant == "base" for n in warned)  # the head variant holds them
    assert "with uncommitted changes" in check_markdown(dirty)
    clean = check("main~1", benchmark=benchmark, repository=repo, environ={},
                  metric=Metric.INSTRUCTIONS)  # fmt: skip
    assert not clean.working_tree and not clean.regression
