"""The API asks git and lists suites through the runner it is given (the real one when none
is): a suite's benchmarks, a stack's commits and an experiment file's [stack] come from the
processes it answers; `run` starts every process of a run through it, with its documented
keywords."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from perflab.api import make_experiment, make_stack, run
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed
from perflab.plan.suite_source import SuiteKind, SuiteSource
from perflab.records.kinds import Metric, RunStatus
from tests.support.fake_git import FakeRepository
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker


def test_a_google_benchmark_binary_is_listed_through_the_runner() -> None:
    runner = FakeRunner().on_run(r"--benchmark_list_tests", stdout="BM_Sort/8\nBM_Sort/64\n")
    experiment = make_experiment(gbench="./bench", variants=["a", "b"], runner=runner)
    assert [b.name for b in experiment.benchmarks] == ["BM_Sort/8", "BM_Sort/64"]
    ((spec, _),) = runner.calls  # the two variants run the same binary: listed once
    assert spec.argv[0] == "./bench"


def test_a_suite_given_as_a_record_is_listed_as_its_keywords_list_it() -> None:
    runner = FakeRunner().on_run(r"--benchmark_list_tests", stdout="BM_Sort/8\nBM_Sort/64\n")
    suite = SuiteSource(kind=SuiteKind.GBENCH, path="./bench", filter="BM_Sort/8")
    experiment = make_experiment(suite=suite, variants=["a", "b"], runner=runner)
    keywords = make_experiment(
        gbench="./bench", gbench_filter="BM_Sort/8", variants=["a", "b"], runner=runner
    )
    assert experiment == keywords


def test_a_stacks_commits_and_repository_come_from_the_runners_git() -> None:
    repo = FakeRepository(path="/work/project")
    base, one, two = repo.line("base", "one", "two")
    runner = FakeRunner().on_run(r"^git ", repo)
    experiment = make_stack(f"{base}..HEAD", stmt="f()", runner=runner)
    assert [(v.name, v.git) for v in experiment.variants] == [
        ("base", base), ("step1", one), ("step2", two),
    ]  # fmt: skip
    assert experiment.repository == "/work/project"


def test_a_stack_takes_make_experiments_benchmark_build_and_setting_keywords() -> None:
    repo = FakeRepository(path="/work/project")
    base, _, _ = repo.line("base", "one", "two")
    runner = FakeRunner().on_run(r"^git ", repo)
    experiment = make_stack(
        f"{base}..HEAD", stmt="f()", setup="import x", build="make", budget_s=7, runner=runner
    )
    assert experiment.stack == ("base", "step1", "step2")
    assert [b.setup for b in experiment.benchmarks] == ["import x"]
    assert {v.build for v in experiment.variants} == {"make"}
    assert experiment.settings.budget_s == 7


def test_an_experiment_files_stack_asks_the_runners_git(tmp_path: Path) -> None:
    repo = FakeRepository(path=str(tmp_path))
    base, step = repo.line("base", "step")
    path = tmp_path / "stack.toml"
    path.write_text(
        f'[stack]\nrange = "{base}..{step}"\n\n[[benchmark]]\nname = "f"\nstmt = "f()"\n'
    )
    experiment = make_experiment(path, runner=FakeRunner().on_run(r"^git ", repo))
    assert [v.git for v in experiment.variants] == [base, step]
    assert experiment.repository == str(tmp_path)


class RecordedProgress:
    def __init__(self) -> None:
        self.benchmarks: set[str] = set()

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None:
        self.benchmarks.add(benchmark)


def test_run_measures_through_the_runner_and_progress_given_as_keywords(tmp_path: Path) -> None:
    runner = FakeRunner()
    runner.on_spawn("statement_worker", ScriptedWorker(lambda spec: 1000.0))
    runner.on_run(r"--version$", stdout="tool 1.0\n")
    runner.on_run("import time", Completed((), 0, "0.05\n", "", 50_000_000))
    made = make_experiment(stmt="f()", name="b", variants=["A", "B"])
    # unpinned and sharing caches: nothing outside the test is touched
    settings = dataclasses.replace(FAST, pin=False, share_caches=True, budget_s=0.2)
    progress = RecordedProgress()
    result = run(
        dataclasses.replace(made, settings=settings),
        store_path=None,
        progress=progress,
        cache_dir=tmp_path,
        started_at_s=time.monotonic(),
        runner=runner,
    )
    assert result.status is RunStatus.COMPLETE and len(result.comparisons) == 1
    assert progress.benchmarks == {"b"}
    assert runner.spawned and all(p.returncode is not None for p in runner.spawned)
