"""The API asks git and lists suites through the runner it is given (the real one when none
is): a suite's benchmarks, a stack's commits and an experiment file's [stack] come from the
processes it answers."""

from __future__ import annotations

from pathlib import Path

from perflab.api import make_experiment, make_stack
from perflab.machine.fake_processes import FakeRunner
from tests.fake_git import FakeRepository


def test_a_google_benchmark_binary_is_listed_through_the_runner() -> None:
    runner = FakeRunner().on_run(r"--benchmark_list_tests", stdout="BM_Sort/8\nBM_Sort/64\n")
    experiment = make_experiment(gbench="./bench", variants=["a", "b"], runner=runner)
    assert [b.name for b in experiment.benchmarks] == ["BM_Sort/8", "BM_Sort/64"]
    ((spec, _),) = runner.calls  # the two variants run the same binary: listed once
    assert spec.argv[0] == "./bench"


def test_a_stacks_commits_and_repository_come_from_the_runners_git() -> None:
    repo = FakeRepository(path="/work/project")
    base, one, two = repo.line("base", "one", "two")
    runner = FakeRunner().on_run(r"^git ", repo)
    experiment = make_stack(f"{base}..HEAD", stmt="f()", runner=runner)
    assert [(v.name, v.git) for v in experiment.variants] == [
        ("base", base), ("step1", one), ("step2", two),
    ]  # fmt: skip
    assert experiment.repository == "/work/project"


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
