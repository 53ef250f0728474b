"""Stacks and matrices planned from a repository's history, with git scripted: the variants and
pairs a range makes, a range with merges followed along its first-parent line, an experiment
file's [stack] resolved in the file's repository, and a table's mistakes said before git is
asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.plan.designs import design_from_mapping, plan_matrix, plan_stack, with_design
from perflab.records.errors import ConfigError
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fake_git import FakeRepository


def _git(repo: FakeRepository) -> FakeRunner:
    return FakeRunner().on_run(r"^git ", repo)


def test_a_stack_compares_each_commit_with_its_parent_and_the_whole_range() -> None:
    repo = FakeRepository()
    base, one, two = repo.line("base", "one", "two")
    design = plan_stack(f"{base}..HEAD", runner=_git(repo), repository=repo.path,
                        template=Variant("each", python="/envs/py/bin/python"))  # fmt: skip
    assert [(v.name, v.git, v.python) for v in design.variants] == [
        ("base", base, "/envs/py/bin/python"),
        ("step1", one, "/envs/py/bin/python"),
        ("step2", two, "/envs/py/bin/python"),
    ]
    assert design.pairs == (("base", "step1"), ("step1", "step2"), ("base", "step2"))
    assert design.stack == ("base", "step1", "step2") and not design.notes


def test_a_range_with_merges_is_followed_along_its_first_parent_line() -> None:
    repo = FakeRepository()
    base, fix = repo.line("base", "fix")
    side = repo.commit("side branch", parents=(base,))
    merge = repo.commit("merge side", parents=(fix, side))
    design = plan_stack(f"{base}..{merge}", runner=_git(repo), repository=repo.path)
    assert [v.git for v in design.variants] == [base, fix, merge]
    (note,) = design.notes
    assert "first-parent line (it holds merges)" in note and "step2 = " in note
    with pytest.raises(ConfigError, match="contains merge commits"):
        plan_stack(f"{base}..{merge}", runner=_git(repo), repository=repo.path, first_parent=False)


def test_an_empty_range_is_refused() -> None:
    repo = FakeRepository()
    (only,) = repo.line("only")
    with pytest.raises(ConfigError, match="has no commits"):
        plan_stack(f"{only}..{only}", runner=_git(repo), repository=repo.path)


def test_a_matrix_applies_each_change_on_each_base_in_the_repository_found() -> None:
    repo = FakeRepository(path="/found")
    design = plan_matrix(["main", "release-2.1"], ["fix-a"], runner=_git(repo))
    assert [(v.name, v.git, v.apply) for v in design.variants] == [
        ("main", "main", ()),
        ("fix-a@main", "main", ("fix-a",)),
        ("release-2.1", "release-2.1", ()),
        ("fix-a@release-2.1", "release-2.1", ("fix-a",)),
    ]
    assert design.pairs == (("main", "fix-a@main"), ("release-2.1", "fix-a@release-2.1"))
    (interaction,) = design.interactions
    assert (interaction.base, interaction.reference_base) == ("release-2.1", "main")
    assert design.repository == "/found"


def test_an_experiment_files_stack_is_resolved_in_the_files_repository(tmp_path: Path) -> None:
    repo = FakeRepository(path=str(tmp_path))
    base, step = repo.line("base", "step")
    runner = _git(repo)
    data = {"stack": {"range": f"{base}..{step}", "cwd": "bench"}}
    design = design_from_mapping(data, source="exp.toml", base_dir=tmp_path, runner=runner)
    assert design is not None and design.repository == str(tmp_path)
    assert [(v.git, v.cwd) for v in design.variants] == [(base, "bench"), (step, "bench")]
    assert runner.calls[0][0].cwd == str(tmp_path)  # the repository is the file's


def test_a_stack_tables_mistake_is_said_before_git_is_asked() -> None:
    runner = _git(FakeRepository())
    with pytest.raises(ConfigError, match=r'needs range = "A\.\.B"'):
        design_from_mapping({"stack": {"from": "main"}}, source="e.toml", base_dir=None,
                            runner=runner)  # fmt: skip
    assert not runner.calls
    assert design_from_mapping({}, source="e.toml", base_dir=None, runner=runner) is None


def test_git_variants_without_a_design_get_the_repository_they_are_in() -> None:
    repo = FakeRepository(path="/checkout")
    experiment = Experiment(
        benchmarks=(Benchmark(name="f", stmt="f()"),),
        variants=(Variant("old", git="v1"), Variant("new", git="HEAD", build="make")),
    )
    designed = with_design(experiment, None, build="make all", runner=_git(repo), start="/x")
    assert designed.repository == "/checkout"
    assert [v.build for v in designed.variants] == ["make all", "make"]


def test_one_comparison_is_said_in_the_singular() -> None:
    from perflab.plan.designs import budget_plan

    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    text = budget_plan(experiment)
    assert "(1 comparison)" in text and "(1 comparisons)" not in text


def _planned(*variants: Variant, build: str) -> Experiment:
    experiment = Experiment(benchmarks=(Benchmark(name="f", stmt="f()"),), variants=variants)
    return with_design(experiment, None, build=build, runner=_git(FakeRepository()), start="/x")


def test_builds_installed_into_one_shared_environment_are_warned_of() -> None:
    # both checkouts' `pip install .` go into the one environment both variants import from:
    # the last build installed is what both measure
    designed = _planned(Variant("main", git="A"), Variant("mine", git="B"), build="pip install .")
    (note,) = designed.plan_notes
    assert "variants 'main', 'mine' each install their build ('pip install .')" in note
    assert "all run the interpreter running perflab" in note
    assert "python=venv/bin/python in each variant" in note
    same = [Variant("main", git="A", python="/env/bin/python"),
            Variant("mine", git="B", python="/env/bin/python")]  # fmt: skip
    (note,) = _planned(*same, build="python -m pip install -q -e .").plan_notes
    assert "all run /env/bin/python" in note


def test_an_environment_per_checkout_or_an_install_elsewhere_is_not_warned_of() -> None:
    own = [Variant("main", git="A", python="venv/bin/python"),
           Variant("mine", git="B", python="venv/bin/python")]  # fmt: skip
    assert not _planned(*own, build="python3 -m venv venv && venv/bin/pip install -q .").plan_notes
    both = [Variant("main", git="A"), Variant("mine", git="B")]
    for build in ("pip install -r requirements.txt && make", "pip install --target=site .",
                  "pip install ./dist/x.whl", "make"):  # fmt: skip
        assert not _planned(*both, build=build).plan_notes, build
    one = [Variant("main", git="A"), Variant("mine", git="B", python="/other/python")]
    assert not _planned(*one, build="pip install .").plan_notes
    own_path = [Variant("main", git="A", env={"PYTHONPATH": "."}),
                Variant("mine", git="B", env={"PYTHONPATH": "."})]  # fmt: skip
    assert not _planned(*own_path, build="pip install .").plan_notes
