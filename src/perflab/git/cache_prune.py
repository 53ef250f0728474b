"""Pruning the build cache: the entries, scratch checkouts and clones no run is using removed,
with git's records of them (`BuildCache.prune`, `perflab cache prune`)."""

from __future__ import annotations

import os
from pathlib import Path

from perflab.git.cache_entry import KEY, CacheEntry, is_real_folder, read_entries
from perflab.git.cache_lock import EntryLocks
from perflab.git.cache_worktree import discard_entry
from perflab.git.clone import CLONES, clone_folder
from perflab.git.repo import run_git
from perflab.machine.own_files import remove_tree
from perflab.machine.proc import ProcessRunner


class CachePruner:
    """Removes what no run is using from one cache directory, through the runs' own locks: an
    entry whose lock it cannot take at once is in use, and left (in `skipped`)."""

    def __init__(self, root: Path, runner: ProcessRunner, locks: EntryLocks) -> None:
        self.root = root
        self.runner = runner
        self.locks = locks
        self.skipped: list[CacheEntry] = []  # entries another run is using

    def prune(self) -> list[CacheEntry]:
        """Remove every entry (its worktree, and git's record of it) that no run is using;
        those in use are left, in `skipped`. A clone no entry uses any more goes too."""
        removed = []
        self.skipped = []
        repositories = set()
        for entry in read_entries(self.root):
            if not self.locks.hold(entry.key, exclusive=True, wait=False):
                self.skipped.append(entry)
                continue
            try:
                # everywhere: an older perflab's entry is a worktree of the user's repository
                discard_entry(self.runner, self.root, entry.repository, entry.key, everywhere=True)
                (self.root / f"{entry.key}.lock").unlink(missing_ok=True)
            finally:
                self.locks.release(entry.key)
            removed.append(entry)
            repositories.add(entry.repository)
        scratch = self._prune_scratch() if self.root.is_dir() else []
        self._prune_clones()
        # git's records of the scratch checkouts, by path: never `git worktree prune`, which
        # in a user's repository also drops the records of the user's own worktrees on a drive
        # not mounted now
        owners: list[str | Path] = [*self._clones()]
        owners += [r for r in sorted(repositories) if os.path.isdir(r)]
        for owner in owners:
            for path in scratch:
                run_git(self.runner, owner, "worktree", "remove", "--force", str(path))
        return removed

    def _clones(self) -> list[Path]:
        """The clones in the cache (folders named as clone_folder names them)."""
        folder = self.root / CLONES
        if not is_real_folder(folder):
            return []
        return sorted(p for p in folder.iterdir() if KEY.fullmatch(p.name) and is_real_folder(p))

    def _prune_clones(self) -> None:
        """Remove the clones no entry uses and no run holds (with their lock files), and the
        half-made ones a killed run left beside a clone."""
        for clone in self._clones():
            name = f"{CLONES}/{clone.name}"
            if not self.locks.hold(name, exclusive=True, wait=False):
                continue  # a run is using it: it may be making an entry there now
            try:
                for leftover in clone.parent.glob(f"{clone.name}.new-*"):
                    remove_tree(leftover)
                # entries are made only while a run holds the clone: none can appear now
                entries = read_entries(self.root)
                if any(clone_folder(self.root, e.repository) == clone for e in entries):
                    continue
                remove_tree(clone)
                (clone.parent / f"{clone.name}-update.lock").unlink(missing_ok=True)
                (clone.parent / f"{clone.name}.lock").unlink(missing_ok=True)
            finally:
                self.locks.release(name)

    def _prune_scratch(self) -> list[Path]:
        """Remove the scratch checkouts (`tmp-*`) that no run is using; their paths."""
        gone = []
        for leftover in self.root.glob("tmp-*"):
            if leftover.suffix in (".lock", ".tmp") or not is_real_folder(leftover):
                continue
            if not self.locks.hold(leftover.name, exclusive=True, wait=False):
                continue  # a run is checking out there
            try:
                remove_tree(leftover)
                (self.root / f"{leftover.name}.lock").unlink(missing_ok=True)
            finally:
                self.locks.release(leftover.name)
            gone.append(leftover)
        return gone
