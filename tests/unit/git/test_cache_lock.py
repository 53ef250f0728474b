"""The lock files several perflab runs share a build cache by (git/cache_lock.py): each
EntryLocks is one run; flock locks of two open files conflict within one process as between
two, so the hand-off between runs is tested here without starting one."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.git.cache_lock import EntryLocks
from perflab.git.repo import GitError

ENTRY = "0123456789abcdef0123"


def run(root: Path, told: list[str] | None = None, wait_s: float = 0.0) -> EntryLocks:
    return EntryLocks(root, on_wait=None if told is None else told.append, wait_s=wait_s)


def test_runs_share_an_entry_and_none_takes_it_while_another_uses_it(tmp_path: Path) -> None:
    first, second, pruning = run(tmp_path), run(tmp_path), run(tmp_path)
    assert first.hold(ENTRY, exclusive=False) and second.hold(ENTRY, exclusive=False)
    assert not pruning.hold(ENTRY, exclusive=True, wait=False)
    first.release(ENTRY)
    assert not pruning.hold(ENTRY, exclusive=True, wait=False)
    second.close()
    assert pruning.hold(ENTRY, exclusive=True, wait=False)
    assert not first.hold(ENTRY, exclusive=False, wait=False)  # being built or removed
    pruning.close()


def test_a_run_building_an_entry_hands_it_over_shared_without_waiting(tmp_path: Path) -> None:
    building, waiting = run(tmp_path), run(tmp_path)
    assert building.hold(ENTRY, exclusive=True)
    assert not waiting.hold(ENTRY, exclusive=False, wait=False)
    assert building.hold(ENTRY, exclusive=False)  # built: exclusive -> shared never waits
    assert waiting.hold(ENTRY, exclusive=False, wait=False)
    # shared -> exclusive lets go of the shared lock first: it waits for the other run
    assert not building.hold(ENTRY, exclusive=True, wait=False)
    waiting.close()
    assert building.hold(ENTRY, exclusive=True, wait=False)
    building.close()


def test_holding_what_is_held_changes_nothing(tmp_path: Path) -> None:
    locks, other = run(tmp_path), run(tmp_path)
    assert locks.hold(ENTRY, exclusive=True) and locks.hold(ENTRY, exclusive=True)
    locks.release(ENTRY)
    locks.release(ENTRY)  # releasing what is not held is nothing
    assert other.hold(ENTRY, exclusive=True, wait=False)
    other.close()


def test_waiting_is_said_once_and_bounded(tmp_path: Path) -> None:
    holder = run(tmp_path)
    holder.hold(ENTRY, exclusive=True)
    told: list[str] = []
    with pytest.raises(GitError, match="in use by another perflab run: waited 0.3 s") as raised:
        run(tmp_path, told, wait_s=0.3).hold(ENTRY, exclusive=False)
    assert "--cache-dir" in (raised.value.hint or "")
    assert told == [f"waiting for another perflab run using the cached checkout {tmp_path / ENTRY}"]
    holder.close()


def test_the_lock_file_is_made_private_beside_the_entry_and_never_followed(
    tmp_path: Path,
) -> None:
    locks = run(tmp_path / "cache")  # the cache's folder is made when first locked
    locks.hold(ENTRY, exclusive=False)
    lock = tmp_path / "cache" / f"{ENTRY}.lock"
    assert lock.is_file() and lock.stat().st_mode & 0o777 == 0o600
    locks.close()
    target = tmp_path / "target"
    target.write_text("keep")
    (tmp_path / "cache" / "linked.lock").symlink_to(target)
    with pytest.raises(OSError):
        locks.hold("linked", exclusive=True)
    assert target.read_text() == "keep"
