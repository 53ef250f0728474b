"""On --ray the driver speaks for the user's repository: a variant's recorded ref is the name
the user gave (the node only saw its commit), and git=HEAD with uncommitted changes is warned
about as on one machine."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from perflab.engine.cluster import uncommitted_notes
from perflab.git.bundle import bundle_commits, named_provenance
from perflab.records.model import Benchmark, Experiment, Severity, Variant
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

OLD, NEW, FIX = "1" * 40, "2" * 40, "3" * 40


def test_the_recorded_ref_is_the_users_name_and_the_commit_stays() -> None:
    commits = {"HEAD~1": OLD, "HEAD": NEW, "fix": FIX}
    info = {
        "ref": OLD,
        "commit": OLD,
        "changes": [{"name": FIX, "kind": "commit", "source": FIX}],
    }
    named = named_provenance(info, Variant("b", git="HEAD~1", apply=("fix",)), commits)
    assert named["ref"] == "HEAD~1" and named["commit"] == OLD
    assert named["changes"] == [{"name": "fix", "kind": "commit", "source": FIX}]
    assert info["ref"] == OLD  # the record read is not changed
    # a variant without git=, or a ref the bundle did not pin, is kept as recorded
    assert named_provenance({"build": "make"}, Variant("a"), commits) == {"build": "make"}
    assert named_provenance(info, None, commits) == info


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, "one", {"mod.py": "X = 1\n"})
    second = commit(repo, "two", {"mod.py": "X = 2\n"})
    return repo, first, second


def test_git_head_with_uncommitted_changes_is_warned_about_by_the_driver(tmp_path: Path) -> None:
    repo, _, second = _repo(tmp_path)
    experiment = Experiment(
        benchmarks=(Benchmark(name="b", stmt="mod.X", setup="import mod"),),
        variants=(Variant("old", git="HEAD~1"), Variant("new", git="HEAD")),
        repository=str(repo),
    )
    assert uncommitted_notes(experiment, bundle_commits(experiment)) == []  # clean
    (repo / "mod.py").write_text("X = 3\n")
    bundle = bundle_commits(experiment)
    assert bundle is not None and bundle.head == second
    (note,) = uncommitted_notes(experiment, bundle)
    assert note.severity is Severity.WARNING and note.variant == "new"
    assert "uncommitted changes" in note.message and "git=HEAD means" in note.message
    assert "mod.py" in note.message
    older = replace(experiment, variants=(Variant("old", git="HEAD~1"),))
    assert uncommitted_notes(older, bundle_commits(older)) == []
    assert uncommitted_notes(experiment, None) == []
    # `perflab check`'s head measures the working tree's changes: HEAD without them is meant
    measured = replace(
        experiment,
        variants=(
            Variant("base", git="HEAD"),
            Variant("head", git="HEAD", apply=(str(tmp_path / "working-tree.patch"),)),
        ),
    )
    assert uncommitted_notes(measured, bundle) == []
