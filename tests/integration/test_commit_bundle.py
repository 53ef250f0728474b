"""git/bundle.py on a real repository made here: the bundle carries exactly the commits the
git= variants name (and their history), making it leaves the user's repository as it was, and a
node unpacks it once into its copy, where the pinned experiment prepares as it would at home."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from perflab.engine.prepare.git_prepare import VariantPreparer
from perflab.git.bundle import bundle_commits, node_repository, unpack_commits
from perflab.machine.proc import SubprocessRunner
from perflab.records.errors import ConfigError
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: one, two, three; branch fix (off two): a change; branch unrelated: never named."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "one", {"mod.py": "X = 1\n", "other.txt": "a\n"})
    commit(repo, "two", {"mod.py": "X = 2\n"})
    git(repo, "checkout", "-q", "-b", "fix")
    commit(repo, "fix", {"other.txt": "fixed\n"})
    git(repo, "checkout", "-q", "-b", "unrelated", "main")
    commit(repo, "unrelated", {"secret.txt": "never shipped\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "three", {"mod.py": "X = 3\n"})
    return repo


def experiment_of(repo: Path, variants: tuple[Variant, ...], **params: str) -> Experiment:
    benchmark = Benchmark(name="b", stmt="mod.X", setup="import mod", params=params)
    return Experiment(benchmarks=(benchmark,), variants=variants, repository=str(repo))


def snapshot(repo: Path) -> tuple[str, str, str, list[str]]:
    """What the bundle must not change: refs, config, objects, the git directory's files."""
    files = sorted(str(p.relative_to(repo)) for p in (repo / ".git").rglob("*") if p.is_file())
    return (
        git(repo, "for-each-ref", "--format=%(objectname) %(refname)"),
        (repo / ".git" / "config").read_text(),
        git(repo, "count-objects", "-v"),
        files,
    )


def test_the_bundle_holds_the_named_commits_and_the_repository_is_unchanged(repo: Path) -> None:
    variants = (
        Variant("base", git="main~1"),
        Variant("fixed", git="main", apply=("fix",)),
        Variant("plain"),
    )
    before = snapshot(repo)
    bundle = bundle_commits(experiment_of(repo, variants))
    assert snapshot(repo) == before
    assert bundle is not None and bundle.origin == os.path.realpath(repo)
    assert dict(bundle.commits) == {
        "main~1": git(repo, "rev-parse", "main~1"),
        "main": git(repo, "rev-parse", "main"),
        "fix": git(repo, "rev-parse", "fix"),
    }
    file = repo.parent / "b.bundle"
    file.write_bytes(bundle.data)
    heads = {line.split()[0] for line in git(repo, "bundle", "list-heads", str(file)).splitlines()}
    assert heads == set(bundle.commits.values())
    assert snapshot(repo) == before  # list-heads reads the file only


def test_no_bundle_without_git_variants(repo: Path) -> None:
    assert bundle_commits(experiment_of(repo, (Variant("a"), Variant("b")))) is None


def test_a_node_unpacks_once_and_prepares_the_commits_without_the_repository(
    repo: Path, tmp_path: Path
) -> None:
    variants = (Variant("base", git="main~1"), Variant("fixed", git="main", apply=("fix",)))
    experiment = experiment_of(repo, variants)
    bundle = bundle_commits(experiment)
    assert bundle is not None
    moved = tmp_path / "moved-away"
    repo.rename(moved)  # the node has no repository at the driver's path
    cache = tmp_path / "cache"
    pinned = unpack_commits(experiment, bundle, cache_dir=cache)
    copy = node_repository(cache, bundle.origin)
    assert pinned.repository == str(copy)
    (note,) = pinned.plan_notes  # the engine writes it into the cell's run
    assert "unpacked into" in note and "it is not on this node" in note
    assert [v.git for v in pinned.variants] == [
        bundle.commits["main~1"],
        bundle.commits["main"],
    ]
    assert pinned.variants[1].apply == (bundle.commits["fix"],)
    assert git(copy, "for-each-ref") == ""  # objects only: nothing a build could see as refs
    unrelated = git(moved, "rev-parse", "unrelated")
    missing = subprocess.run(["git", "cat-file", "-e", unrelated], cwd=copy, check=False)
    assert missing.returncode != 0  # a branch no variant names is not shipped

    packs = sorted((copy / "objects" / "pack").iterdir())
    again = unpack_commits(experiment, bundle, cache_dir=cache)
    assert "already all in" in again.plan_notes[0]
    assert again.variants == pinned.variants
    assert sorted((copy / "objects" / "pack").iterdir()) == packs

    preparer = VariantPreparer(SubprocessRunner(), repository=pinned.repository, cache_dir=cache)
    try:
        benchmark = pinned.benchmarks[0]
        prepared = preparer.prepare(pinned.variants[1], benchmark)
    finally:
        preparer.close()
    assert prepared.provenance["commit"] == bundle.commits["main"]
    checkout = Path(prepared.variant.cwd or "")
    assert (checkout / "mod.py").read_text() == "X = 3\n"
    assert (checkout / "other.txt").read_text() == "fixed\n"  # apply=fix, its commit's diff


def test_cells_unpacking_at_once_on_one_node_both_get_the_commits(
    repo: Path, tmp_path: Path
) -> None:
    experiment = experiment_of(repo, (Variant("a", git="main~2"), Variant("b", git="main")))
    bundle = bundle_commits(experiment)
    assert bundle is not None
    notes: list[str] = []
    errors: list[BaseException] = []

    def unpack() -> None:
        try:
            unpacked = unpack_commits(experiment, bundle, cache_dir=tmp_path / "cache")
            notes.append(unpacked.plan_notes[0])
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=unpack) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sum("unpacked into" in n for n in notes) == 1
    assert sum("already all in" in n for n in notes) == 2


def test_refs_chosen_by_parameters_are_pinned_per_cell(repo: Path, tmp_path: Path) -> None:
    variants = (Variant("old", git="main~2"), Variant("new", git="$ref"))
    cell = experiment_of(repo, variants, ref="main~1")
    bundle = bundle_commits(cell)
    assert bundle is not None
    pinned = unpack_commits(cell, bundle, cache_dir=tmp_path / "cache")
    assert pinned.variants[1].git == git(repo, "rev-parse", "main~1")
    both = Experiment(
        benchmarks=(
            Benchmark(name="b[ref=main~1]", stmt="1", params={"ref": "main~1"}),
            Benchmark(name="b[ref=main]", stmt="1", params={"ref": "main"}),
        ),
        variants=variants,
        repository=str(repo),
    )
    whole = bundle_commits(both)
    assert whole is not None and set(whole.commits) == {"main~2", "main~1", "main"}
    with pytest.raises(ConfigError, match="pinned per cell"):
        unpack_commits(both, whole, cache_dir=tmp_path / "cache")
