"""check's gate, with git and the runs scripted: head against the merge base, the gate's
decision by its threshold, the working tree's changes measured as a patch, and the refusals
that say what to do."""

from __future__ import annotations

import pytest

from perflab.git.repo import GitError
from perflab.machine.fake_processes import FakeRunner
from perflab.records.bisect import StepState
from perflab.records.errors import ConfigError
from perflab.records.workflow_results import CheckResult
from perflab.workflows import Benchmarked, WorkflowServices, check, check_with
from tests.support.fake_git import FakeRepository
from tests.support.scripted_runs import ScriptedRuns


def _branch() -> tuple[FakeRepository, str, str, str]:
    """main moved on after the branch left it: (repo, the merge base, main's tip, the head)."""
    repo = FakeRepository()
    (fork,) = repo.line("fork point")
    main = repo.commit("main moved on", parents=(fork,))
    head = repo.commit("the change", parents=(fork,))
    repo.refs["main"] = main
    return repo, fork, main, head


def _checked(repo: FakeRepository, runs: ScriptedRuns, **options: object) -> CheckResult:
    runner = FakeRunner().on_run(r"^git ", repo)
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    return check(
        "main", benchmark=benchmark, metric="time", repository=repo.path, environ={},
        **options,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("head_figure", "state", "regressed"),
    [(110.0, StepState.BAD, ("f()",)), (100.5, StepState.GOOD, ()), (90.0, StepState.GOOD, ())],
)
def test_the_gate_fails_only_a_change_slower_beyond_the_threshold(
    head_figure: float, state: StepState, regressed: tuple[str, ...]
) -> None:
    repo, fork, main, head = _branch()
    runs = ScriptedRuns({fork: 100.0, main: 50.0, head: head_figure})
    result = _checked(repo, runs, head=head[:10])
    assert result.outcome.state is state
    assert result.regressed == regressed
    # against the merge base, not main's tip (which is twice as fast): the change's own effect
    assert result.base.commit == fork and result.head.commit == head
    assert any("merge base" in note for note in result.notes)
    (experiment,) = runs.experiments
    assert [(v.name, v.git) for v in experiment.variants] == [("base", fork), ("head", head)]


def test_without_the_merge_base_main_itself_is_the_base() -> None:
    repo, fork, main, head = _branch()
    result = _checked(repo, ScriptedRuns({fork: 100.0, main: 50.0, head: 100.0}), head=head,
                      merge_base=False)  # fmt: skip
    assert result.base.commit == main
    assert result.outcome.state is StepState.BAD  # 100 against main's 50


def test_the_working_trees_changes_are_measured_as_a_patch_on_head() -> None:
    repo, fork, main, head = _branch()
    repo.uncommitted = "diff --git a/f.py b/f.py\n"
    runs = ScriptedRuns({fork: 100.0, main: 100.0, head: 100.0}, patched=1.2)
    result = _checked(repo, runs)
    assert result.working_tree
    assert result.outcome.state is StepState.BAD  # only the uncommitted change is slower
    (experiment,) = runs.experiments
    head_variant = experiment.variants[1]
    assert head_variant.git == head and len(head_variant.apply) == 1
    assert any("working tree" in note for note in result.notes)


def test_a_crashed_head_is_no_verdict_and_says_why() -> None:
    repo, fork, main, head = _branch()
    result = _checked(repo, ScriptedRuns({fork: 100.0, main: 100.0, head: None}), head=head)
    assert result.outcome.state is StepState.SKIPPED
    assert "crashed" in result.outcome.reason


def test_head_that_is_the_base_is_refused() -> None:
    repo, fork, main, head = _branch()
    with pytest.raises(ConfigError, match="no change to check"):
        _checked(repo, ScriptedRuns({}), head=main, merge_base=False)


def test_a_base_missing_from_the_clone_says_how_to_fetch_it() -> None:
    repo, *_ = _branch()
    del repo.refs["main"]
    with pytest.raises(GitError, match="'main' is not in this clone") as raised:
        _checked(repo, ScriptedRuns({}))
    assert raised.value.hint is not None and "git fetch origin" in raised.value.hint


def test_check_with_services_reads_the_base_from_their_ci_variables() -> None:
    repo, fork, main, head = _branch()
    repo.refs["origin/main"] = main
    runner = FakeRunner().on_run(r"^git ", repo)
    runs = ScriptedRuns({fork: 100.0, head: 100.0})
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    services = WorkflowServices(repository=repo.path, environ={"GITHUB_BASE_REF": "main"})
    checked = check_with(benchmark=benchmark, services=services, head=head, metric="time")
    assert (checked.base_ref, checked.base_from) == ("origin/main", "GITHUB_BASE_REF")
    assert checked.base.commit == fork  # the merge base with the CI's base branch
