"""Pruning removes what no run is using, and leaves what another run holds."""

from __future__ import annotations

from pathlib import Path

from perflab.git.cache_entry import CacheEntry, CacheStatus, save_entry
from perflab.git.cache_lock import EntryLocks
from perflab.git.cache_prune import CachePruner
from perflab.git.clone import clone_folder
from perflab.machine.fake_processes import FakeRunner


def _entry(root: Path, repository: str) -> CacheEntry:
    key = "ab" * 10
    entry = CacheEntry(
        key=key,
        path=root / key,
        repository=repository,
        ref="HEAD",
        commit="c" * 40,
        tree="t" * 40,
        build=None,
        status=CacheStatus.CHECKED_OUT,
    )
    (root / key).mkdir(parents=True)
    save_entry(root, entry)
    return entry


def test_scratch_checkouts_and_clones_no_run_uses_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    scratch, clone = root / "tmp-0123456789ab", clone_folder(root, str(tmp_path / "repo"))
    scratch.mkdir(parents=True)
    clone.mkdir(parents=True)
    runner = FakeRunner()  # nothing left that git records: no git run
    pruner = CachePruner(root, runner, EntryLocks(root))
    assert pruner.prune() == [] and pruner.skipped == []
    assert not scratch.exists() and not clone.exists() and runner.calls == []


def test_what_another_run_holds_is_left(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    repository = str(tmp_path / "repo")
    entry = _entry(root, repository)
    clone = clone_folder(root, repository)
    clone.mkdir(parents=True)
    held_scratch, free_scratch = root / "tmp-held", root / "tmp-free"
    held_scratch.mkdir()
    free_scratch.mkdir()
    other_run = EntryLocks(root)
    other_run.hold(entry.key, exclusive=False)
    other_run.hold(held_scratch.name, exclusive=True)
    runner = FakeRunner().on_run(r"^git worktree remove --force")
    try:
        pruner = CachePruner(root, runner, EntryLocks(root))
        assert pruner.prune() == []
    finally:
        other_run.close()
    assert [e.key for e in pruner.skipped] == [entry.key]
    assert entry.path.exists() and held_scratch.exists() and not free_scratch.exists()
    assert clone.exists()  # its entry is still there
    removed = [spec.argv[-1] for spec, _ in runner.calls]
    assert removed == [str(free_scratch)]  # git's record of it, in the clone
