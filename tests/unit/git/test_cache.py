"""The build cache's decisions (git/cache.py's BuildCache), on FakeCheckouts: an entry is reused
only as it was recorded, built once, checked out and built again when anything in it changed
(and said), dropped when its build moved it; prune leaves what another run holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from perflab.git.cache import BuildCache
from perflab.git.cache_entry import CacheEntry, CacheStatus, load_entry
from perflab.git.repo import ResolvedRef
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.records.errors import BenchmarkFailedError
from tests.support.fake_git import TRACKED, FakeCheckouts

BASE = ResolvedRef("main", "c" * 40, "e" * 40, "the base")
BUILD = "make"
Build = Callable[[Path], int]  # what the build does in its checkout -> its exit status


def make_output(checkout: Path) -> int:
    (checkout / "out.so").write_text("built")
    return 0


class Builds:
    """The build command run under the reaper, scripted: `does` runs in the checkout."""

    def __init__(self, does: Build = make_output) -> None:
        self.does = does
        self.count = 0

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        self.count += 1
        status = self.does(Path(spec.cwd or "."))
        return Completed(spec.argv, status, "compiling\n", "", 1)


@pytest.fixture
def checkouts(tmp_path: Path) -> FakeCheckouts:
    return FakeCheckouts(tmp_path / "repo")


def cache(root: Path, checkouts: FakeCheckouts, builds: Builds | None = None) -> BuildCache:
    """One perflab run's view of the cache at `root`."""
    runner = FakeRunner().on_run(r"build_reaper", builds or Builds()).on_run(r"^git ", checkouts)
    return BuildCache(root, runner, lock_wait_s=0.0)


def built_entry(root: Path, checkouts: FakeCheckouts, builds: Builds | None = None) -> CacheEntry:
    """The base checked out and built by a run that then ended."""
    run = cache(root, checkouts, builds)
    try:
        entry, from_cache = run.checkout(str(checkouts.repository), BASE, (), BUILD)
        assert not from_cache and not entry.ready
        return run.build(entry, subdirectory=None, env={}, timeout_s=60.0, variant="B")
    finally:
        run.close()


def test_a_built_entry_is_reused_as_recorded_without_a_checkout(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    builds = Builds()
    built = built_entry(tmp_path / "cache", checkouts, builds)
    assert built.status is CacheStatus.BUILT and built.outputs_digest is not None
    assert built.path == tmp_path / "cache" / built.key
    again = cache(tmp_path / "cache", checkouts, builds)
    entry, from_cache = again.checkout(str(checkouts.repository), BASE, (), BUILD)
    assert from_cache and entry == built
    assert again.build(entry, subdirectory=None, env={}, timeout_s=60.0, variant="B") is entry
    assert builds.count == 1 and checkouts.added() == 1 and again.repaired == {}


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda fake, path: fake.heads.update({path: "d" * 40}), "its HEAD is at dddddddddd"),
        (lambda fake, path: (path / TRACKED).write_text("edited"), "tracked files differ"),
        (lambda fake, path: (path / "out.so").write_text("truncat"), "outputs changed"),
        (lambda fake, path: (path / "stray.o").write_text(""), "outputs changed"),
        (lambda fake, path: (path / ".git").unlink(), "its .git file was deleted"),
    ],
    ids=["head-moved", "tracked-file-edited", "output-changed", "output-added", "git-deleted"],
)
def test_an_entry_changed_since_its_build_is_checked_out_and_built_again_and_said(
    tmp_path: Path,
    checkouts: FakeCheckouts,
    spoil: Callable[[FakeCheckouts, Path], object],
    said: str,
) -> None:
    builds = Builds()
    built = built_entry(tmp_path / "cache", checkouts, builds)
    spoil(checkouts, built.path)
    again = cache(tmp_path / "cache", checkouts, builds)
    entry, from_cache = again.checkout(str(checkouts.repository), BASE, (), BUILD)
    assert not from_cache and entry.status is CacheStatus.CHECKED_OUT
    assert said in again.repaired[built.key]
    assert "it was checked out and built again" in again.repaired[built.key]
    assert checkouts.added() == 2 and (entry.path / TRACKED).read_text() == BASE.commit
    rebuilt = again.build(entry, subdirectory=None, env={}, timeout_s=60.0, variant="B")
    assert rebuilt.status is CacheStatus.BUILT and builds.count == 2


def test_an_older_perflabs_worktree_of_the_users_repository_is_replaced_and_said(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    built = built_entry(tmp_path / "cache", checkouts)
    older = f"gitdir: {checkouts.repository}/.git/worktrees/{built.key}\n"
    (built.path / ".git").write_text(older)
    again = cache(tmp_path / "cache", checkouts)
    entry, from_cache = again.checkout(str(checkouts.repository), BASE, (), BUILD)
    assert not from_cache and "made by an older perflab" in again.repaired[built.key]
    assert (entry.path / ".git").read_text() != older


def test_an_entry_with_nothing_to_build_is_ready_as_checked_out(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    first = cache(tmp_path / "cache", checkouts)
    entry, _ = first.checkout(str(checkouts.repository), BASE, (), None)
    first.close()
    assert entry.ready and entry.status is CacheStatus.CHECKED_OUT
    again = cache(tmp_path / "cache", checkouts)
    assert again.checkout(str(checkouts.repository), BASE, (), None) == (entry, True)
    # another build command is another entry
    other, from_cache = again.checkout(str(checkouts.repository), BASE, (), BUILD)
    assert not from_cache and other.key != entry.key


def test_a_failed_build_is_kept_as_failed_and_built_again_when_asked_for(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    failing = Builds(lambda checkout: 2)
    with pytest.raises(BenchmarkFailedError, match="exited with status 2") as raised:
        built_entry(tmp_path / "cache", checkouts, failing)
    assert raised.value.detail == "compiling"
    (stored,) = cache(tmp_path / "cache", checkouts).entries()
    assert stored.status is CacheStatus.FAILED and not stored.ready
    builds = Builds()
    rebuilt = built_entry(tmp_path / "cache", checkouts, builds)  # handed over as failed
    assert rebuilt.key == stored.key and rebuilt.status is CacheStatus.BUILT
    assert builds.count == 1 and checkouts.added() == 1  # the same checkout, built again


def test_a_build_that_moves_head_is_not_measured_and_its_entry_goes(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    def checks_out_another_commit(checkout: Path) -> int:
        checkouts.heads[checkout] = "d" * 40
        return 0

    with pytest.raises(BenchmarkFailedError, match="the checkout moved") as raised:
        built_entry(tmp_path / "cache", checkouts, Builds(checks_out_another_commit))
    assert "not measured" in str(raised.value) and "no git checkout" in (raised.value.hint or "")
    assert cache(tmp_path / "cache", checkouts).entries() == []


def test_a_build_that_changes_the_users_refs_fails_and_the_refs_are_put_back(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    checkouts.refs.update({"refs/heads/main": BASE.commit, "refs/tags/v1": "a" * 40})

    def tags_and_moves(checkout: Path) -> int:
        checkouts.refs["refs/tags/built"] = BASE.commit
        checkouts.refs["refs/heads/main"] = "d" * 40
        del checkouts.refs["refs/tags/v1"]
        return make_output(checkout)

    with pytest.raises(BenchmarkFailedError, match="changed your repository's refs") as raised:
        built_entry(tmp_path / "cache", checkouts, Builds(tags_and_moves))
    assert "created refs/tags/built" in str(raised.value)
    assert "deleted refs/tags/v1" in str(raised.value)
    assert "moved refs/heads/main" in str(raised.value)
    assert checkouts.refs == {"refs/heads/main": BASE.commit, "refs/tags/v1": "a" * 40}


def test_prune_leaves_the_entries_another_run_uses_and_removes_them_after(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    root = tmp_path / "cache"
    built = built_entry(root, checkouts)
    using = cache(root, checkouts)
    entry, from_cache = using.checkout(str(checkouts.repository), BASE, (), BUILD)
    assert from_cache  # its lock is held shared until the run ends
    pruning = cache(root, checkouts)
    assert pruning.prune() == [] and pruning.skipped == [built]
    assert load_entry(root, built.key) == built
    using.close()
    assert pruning.prune() == [built] and pruning.skipped == []
    assert not entry.path.exists() and not (root / f"{built.key}.json").exists()
    assert list((root / "clones").iterdir()) == []  # the clone no entry uses goes too


def test_a_description_naming_a_folder_elsewhere_is_read_as_the_caches_own(
    tmp_path: Path, checkouts: FakeCheckouts
) -> None:
    root = tmp_path / "cache"
    built = built_entry(root, checkouts)
    meta = root / f"{built.key}.json"
    meta.write_text(json.dumps({**built.to_json(), "path": str(tmp_path / "elsewhere")}))
    (entry,) = cache(root, checkouts).entries()
    assert entry.path == root / built.key
