"""history's series over a range, with git and the runs scripted: one point per commit (a
commit that crashed is a skipped point that says why), the same tree measured once, change
points confirmed by a direct comparison, and a suite's series benchmark by benchmark."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.plan.pytest_suite import LIST_ENV
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Experiment
from perflab.records.results import RunResult
from perflab.records.workflow_results import HistoryResult
from perflab.workflows import (
    Benchmarked,
    Suite,
    WorkflowServices,
    history,
    history_with,
    suite_history,
)
from perflab.workflows.benchmarked import Measure
from tests.support.fake_git import FakeRepository
from tests.support.scripted_runs import ScriptedRuns


def _history(
    repo: FakeRepository, runs: ScriptedRuns, range_text: str, every: int = 1
) -> HistoryResult:
    runner = FakeRunner().on_run(r"^git ", repo)
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    return history(
        range_text, benchmark=benchmark, metric="time", every=every, repository=repo.path
    )


def test_each_commit_is_a_point_and_a_crashed_one_says_why() -> None:
    repo = FakeRepository()
    base, a, crashed, c, d = repo.line("base", "a", "crashed", "c", "d")
    figures = {base: 100.0, a: 100.0, crashed: None, c: 100.0, d: 100.0}
    result = _history(repo, ScriptedRuns(figures), f"{base[:10]}..{d[:10]}")
    assert [p.commit for p in result.points] == [base, a, crashed, c, d]
    assert [p.value for p in result.points] == [100.0, 100.0, None, 100.0, 100.0]
    (skipped,) = [p for p in result.points if p.skipped]
    assert skipped.commit == crashed and "crashed" in skipped.skipped
    assert result.measured_now == 5 and not result.changes


def test_a_step_in_the_series_is_confirmed_by_comparing_the_commits_either_side() -> None:
    repo = FakeRepository()
    commits = repo.line("base", "a", "b", "slower", "d", "e")
    figures = dict(zip(commits, (100.0, 100.0, 100.0, 130.0, 130.0, 130.0), strict=True))
    runs = ScriptedRuns(figures)
    result = _history(repo, runs, f"{commits[0]}..HEAD")
    (change,) = result.changes
    assert (change.before.commit, change.after.commit) == (commits[2], commits[3])
    assert change.confirmed and change.ratio == pytest.approx(1.3)
    # one run measured the series, a second compared the two commits directly
    direct = runs.experiments[-1]
    assert [(v.name, v.git) for v in direct.variants] == [
        ("before", commits[2]),
        ("after", commits[3]),
    ]


def test_commits_with_the_same_tree_are_measured_once() -> None:
    repo = FakeRepository()
    base, change = repo.line("base", "change")
    revert = repo.commit("revert the change", parents=(change,), tree=repo.commits[base].tree)
    runs = ScriptedRuns({base: 100.0, change: 100.0, revert: 100.0})
    result = _history(repo, runs, f"{base}..{revert}")
    (series_run, *_) = runs.experiments
    assert sorted(str(v.git) for v in series_run.variants) == sorted([base, change])
    assert result.points[0].value == result.points[2].value == 100.0


def test_every_nth_commit_is_counted_back_from_the_tip() -> None:
    repo = FakeRepository()
    commits = repo.line("base", "a", "b", "c", "d")
    result = _history(repo, ScriptedRuns(dict.fromkeys(commits, 100.0)), "HEAD~4..HEAD", every=2)
    assert [p.commit for p in result.points] == [commits[0], commits[2], commits[4]]


def test_a_range_where_nothing_could_be_measured_is_an_error_with_the_reason() -> None:
    repo = FakeRepository()
    base, a = repo.line("base", "a")
    with pytest.raises(BenchmarkFailedError, match="no commit of .* could be built") as raised:
        _history(repo, ScriptedRuns({base: None, a: None}), f"{base}..{a}")
    assert raised.value.detail is not None and "crashed" in raised.value.detail


def test_a_suites_benchmarks_each_have_their_series_from_one_listing() -> None:
    repo = FakeRepository()
    commits = repo.line("base", "a", "b", "slower sort", "d", "e")
    runner = _suite_runner(repo)
    sort = dict(zip(commits, (100.0, 100.0, 100.0, 130.0, 130.0, 130.0), strict=True))
    runs = ScriptedRuns(dict.fromkeys(commits, 50.0), by_benchmark={"test_x.py::test_sort": sort})
    benchmark = Benchmarked(suite=Suite(pytest="tests/"), store_path=None, runner=runner,
                            measure=runs)  # fmt: skip
    found = suite_history(f"{commits[0]}..HEAD", benchmark=benchmark, metric="time",
                          repository=repo.path)  # fmt: skip
    by_name = {s.benchmark: s for s in found.series}
    assert set(by_name) == {"test_x.py::test_sort", "test_x.py::test_scan"}
    (change,) = by_name["test_x.py::test_sort"].changes
    assert change.after.commit == commits[3] and change.confirmed
    assert not by_name["test_x.py::test_scan"].changes
    # every commit was measured in one run of the whole suite
    assert found.measured_now == len(commits)


def test_history_with_services_times_the_answer_by_their_clock() -> None:
    repo = FakeRepository()
    base, a = repo.line("base", "a")
    runner = FakeRunner().on_run(r"^git ", repo)
    runs = ScriptedRuns({base: 100.0, a: 100.0})
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    ticks = iter((5.0, 9.0))
    services = WorkflowServices(repository=repo.path, clock=lambda: next(ticks))
    result = history_with(
        f"{base[:10]}..{a[:10]}", benchmark=benchmark, services=services, metric="time"
    )
    assert [p.value for p in result.points] == [100.0, 100.0]
    assert result.seconds == 4.0


def test_each_part_of_a_long_history_is_told_before_it_is_measured() -> None:
    repo = FakeRepository()
    commits = repo.line(*(f"c{i}" for i in range(40)))
    runner = FakeRunner().on_run(r"^git ", repo)
    runs = ScriptedRuns(dict.fromkeys(commits, 100.0))
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    told: list[tuple[int, int, int, int]] = []
    services = WorkflowServices(repository=repo.path, on_part=lambda *part: told.append(part))
    history_with(f"{commits[0]}..{commits[-1]}", benchmark=benchmark, services=services,
                 metric="time")  # fmt: skip
    # 40 commits in runs of 32 (COMMITS_PER_RUN): before each, what came before it; none held
    assert told == [(0, 32, 40, 0), (32, 8, 40, 0)]


def test_a_commit_whose_failure_only_the_runs_error_holds_says_it() -> None:
    repo = FakeRepository()
    base, a = repo.line("base", "a")
    scripted = ScriptedRuns({base: None, a: None})

    def measure(experiment: Experiment, benchmarked: object) -> RunResult:
        result = scripted(experiment, benchmarked)
        names = ", ".join(f"variant {v.name!r}: file not found" for v in experiment.variants)
        return dataclasses.replace(result, failures=(), error=names)

    runner = FakeRunner().on_run(r"^git ", repo)
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=measure)
    with pytest.raises(BenchmarkFailedError) as raised:
        history(f"{base}..{a}", benchmark=benchmark, metric="time", repository=repo.path)
    assert raised.value.detail is not None and "file not found" in raised.value.detail


def test_each_change_points_direct_comparison_is_told_before_it_is_measured() -> None:
    repo = FakeRepository()
    commits = repo.line("base", "a", "slower", "b")
    runs = ScriptedRuns(dict(zip(commits, (100.0, 100.0, 130.0, 130.0), strict=True)))
    runner = FakeRunner().on_run(r"^git ", repo)
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner, measure=runs)
    told: list[tuple[str, str]] = []
    services = WorkflowServices(
        repository=repo.path, on_confirm=lambda before, after: told.append((before, after))
    )
    history_with(f"{commits[0]}..HEAD", benchmark=benchmark, services=services, metric="time")
    assert told == [(commits[1], commits[2])]


def _loaded(runs: ScriptedRuns, loads: dict[int, float]) -> Measure:
    """`runs`, each run's figures times the machine's load then (its number -> the factor)."""

    def measure(experiment: Experiment, benchmarked: object) -> RunResult:
        result = runs(experiment, benchmarked)
        load = loads.get(result.run_id, 1.0)
        comparisons = tuple(
            dataclasses.replace(
                c, baseline_value=c.baseline_value * load, variant_value=c.variant_value * load
            )  # fmt: skip
            for c in result.comparisons
        )
        return dataclasses.replace(result, comparisons=comparisons)

    return measure


def test_a_step_of_load_between_two_parts_is_levelled_through_their_shared_commit() -> None:
    repo = FakeRepository()
    commits = repo.line(*(f"c{i}" for i in range(40)))
    figures = {c: 100.0 * (1.03 if i >= 10 else 1.0) for i, c in enumerate(commits)}
    runs = ScriptedRuns(figures)
    runner = FakeRunner().on_run(r"^git ", repo)
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=runner,
                            measure=_loaded(runs, {2: 1.08}))  # fmt: skip
    result = history(f"{commits[0]}..{commits[-1]}", benchmark=benchmark, metric="time",
                     repository=repo.path)  # fmt: skip
    # the second part (32 commits a run) measures the first part's last commit again, first
    assert [v.git for v in runs.experiments[1].variants][:2] == [commits[31], commits[32]]
    assert [p.value for p in result.points][31:33] == [103.0, pytest.approx(103.0 * 1.08)]
    # its 8% is the machine's: levelled away; the real 3% step stays, and is confirmed
    (change,) = result.changes
    assert change.after.commit == commits[10] and change.confirmed
    (scale,) = result.run_scales
    assert (scale.run_id, scale.against_run, scale.shared_commit) == (2, 1, commits[31])
    assert scale.scale == pytest.approx(1 / 1.08)
    assert result.points[32].series_value == pytest.approx(103.0)
    assert any("largest scale -7.4%, run 2" in note for note in result.notes)
    document = result.to_json()
    assert document["run_scales"][0]["shared_commit"] == commits[31]
    assert document["points"][32]["levelled_value"] == pytest.approx(103.0)


def test_a_suites_benchmarks_are_each_levelled_by_their_own_figures() -> None:
    repo = FakeRepository()
    commits = repo.line(*(f"c{i}" for i in range(40)))
    runner = _suite_runner(repo)
    sort = {c: 200.0 * (1.03 if i >= 10 else 1.0) for i, c in enumerate(commits)}
    runs = ScriptedRuns(dict.fromkeys(commits, 50.0), by_benchmark={"test_x.py::test_sort": sort})
    benchmark = Benchmarked(suite=Suite(pytest="tests/"), store_path=None, runner=runner,
                            measure=_loaded(runs, {2: 1.08}))  # fmt: skip
    found = suite_history(f"{commits[0]}..{commits[-1]}", benchmark=benchmark, metric="time",
                          repository=repo.path)  # fmt: skip
    by_name = {s.benchmark: s for s in found.series}
    (change,) = by_name["test_x.py::test_sort"].changes
    assert change.after.commit == commits[10]
    assert not by_name["test_x.py::test_scan"].changes  # its 8% at commit 32 levelled away
    for series in found.series:
        (scale,) = series.run_scales
        assert scale.shared_commit == commits[31] and scale.scale == pytest.approx(1 / 1.08)


def _suite_runner(repo: FakeRepository) -> FakeRunner:
    """A runner whose git is `repo` and whose pytest lists test_x.py's test_sort and test_scan."""
    listing = "".join(
        json.dumps({"nodeid": f"test_x.py::{name}", "path": "test_x.py", "rootdir": "."}) + "\n"
        for name in ("test_sort", "test_scan")
    )

    def collect(spec: LaunchSpec, stdin: str | None) -> Completed:
        assert spec.env is not None
        Path(spec.env[LIST_ENV]).write_text(listing)
        return Completed(spec.argv, 0, "", "", 1)

    return FakeRunner().on_run(r"^git ", repo).on_run(r"-m pytest --collect-only", collect)


def test_a_kept_direct_comparison_holds_its_verdicts_and_nothing_the_store_has() -> None:
    """25 change points kept whole took a 501-commit history to 260 MiB."""
    from perflab.engine.reusable_runs import StoredPair
    from perflab.workflows.history import kept_while_going_on
    from tests.support.report_runs import synthetic_run

    analysed, stored = synthetic_run()
    whole = dataclasses.replace(analysed, samples=stored.samples)
    kept = kept_while_going_on(StoredPair(whole, "presorted", "shuffled")).result
    assert [(c.metric, c.ratio, c.ci_low, c.ci_high, c.verdict) for c in kept.comparisons] == [
        (c.metric, c.ratio, c.ci_low, c.ci_high, c.verdict) for c in whole.comparisons
    ]
    assert whole.samples and whole.sections and any(c.details for c in whole.comparisons)
    assert not (kept.samples or kept.artifacts or kept.sections or kept.measurements)
    assert all(c.details is None for c in kept.comparisons)
    assert kept.run_id == whole.run_id
