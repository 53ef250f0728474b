"""Checkouts and builds of git refs, cached by tree hash and build command.

Each entry is a linked worktree of perflab's own clone of the user's repository (git/clone.py:
`<cache>/clones/<name>`, sharing the user's objects), never of the user's repository, whose
worktrees, refs, index, stash, HEAD and config a run leaves as they were. `<cache>/<key>/` is
the checkout and `<cache>/<key>.json` says what it holds (repository, ref, commit, tree,
changes applied, build command, build status and output). The key hashes the repository, the
tree and the build command, so a ref named in several cells, or measured again, is checked out
and built once. A clone is brought up to date with the user's repository once a run, and held
(shared) by each run that uses it: `prune` removes one no entry and no run uses.

Entries are shared by every perflab run using the cache directory: `<cache>/<key>.lock` is held
shared by each run that uses the entry (until the run ends) and exclusive while it is checked
out or built, so two runs never build in one place and `prune` skips entries in use. A built
entry records a digest of its files (the tracked tree, and the build's outputs, untracked):
an entry changed since its build is checked out and built again, never measured as it is.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perflab.git.cache_check import OLDER_CHECKOUT, changed, outputs_digest
from perflab.git.cache_entry import (
    CacheEntry,
    CacheStatus,
    Change,
    cache_key,
    entry_label,
    load_entry,
    read_entries,
    save_entry,
)
from perflab.git.cache_lock import EntryLocks
from perflab.git.cache_prune import CachePruner
from perflab.git.cache_worktree import (
    OUTPUT_TAIL_CHARS,
    add_worktree,
    apply_changes,
    discard_entry,
    move_into_place,
    remove_worktree,
    update_submodules,
)
from perflab.git.clone import CLONES, clone_folder, prepare_clone, refs_of
from perflab.git.repo import GitError, ResolvedRef, run_git
from perflab.machine.builds import run_build
from perflab.machine.own_files import own_folder
from perflab.machine.proc import Completed, ProcessRunner
from perflab.records.errors import BenchmarkFailedError


@dataclass(frozen=True)
class _Wanted:
    """One checkout asked for: `base` of `repository` with `changes` applied, for `build`."""

    repository: str
    base: ResolvedRef
    changes: tuple[Change, ...]
    build: str | None

    @property
    def label(self) -> str:
        return self.base.ref + "".join(f"+{c.name}" for c in self.changes)


class BuildCache:
    """The checkouts and builds of git= variants, one per (tree, build command), shared by the runs
    using its directory through a lock per entry."""

    def __init__(
        self,
        root: str | Path,
        runner: ProcessRunner,
        *,
        on_wait: Callable[[str], None] | None = None,
        lock_wait_s: float = 3600.0,
    ) -> None:
        # absolute: git and builds run in other folders (a relative --cache-dir failed every commit)
        self.root = Path(root).absolute()
        self.runner = runner
        # told once when another run holds an entry this one needs
        self.locks = EntryLocks(self.root, on_wait=on_wait, wait_s=lock_wait_s)
        # what was found wrong with a cached entry and repaired, per key (said to the user)
        self.repaired: dict[str, str] = {}
        self.skipped: list[CacheEntry] = []  # prune: entries another run is using
        self.stopped: dict[str, int] = {}  # per key: processes its build left, stopped
        self._cloned: set[str] = set()  # repositories whose clone this run brought up to date

    def close(self) -> None:
        """Release every entry this run used (the process ending does it too)."""
        self.locks.close()

    # ---- perflab's clone of the user's repository

    def _clone(self, repository: str) -> Path:
        """perflab's clone of `repository`, brought up to date once a run; held shared until
        the run ends, as prune removes a clone only while no run holds it."""
        folder = clone_folder(self.root, repository)
        if repository in self._cloned:
            return folder
        try:
            own_folder(self.root, folder.parent)
        except OSError as error:
            raise GitError(
                f"cannot keep perflab's clones in {folder.parent}: {error.strerror}",
                hint="remove what is there (perflab makes the folder), or pass --cache-dir DIR",
            ) from None
        name = f"{CLONES}/{folder.name}"
        self.locks.hold(name, exclusive=False)
        self.locks.hold(f"{name}-update", exclusive=True)
        try:
            prepare_clone(self.runner, repository, folder)
        finally:
            self.locks.release(f"{name}-update")
        self._cloned.add(repository)
        return folder

    # ---- reading

    def entries(self) -> list[CacheEntry]:
        return read_entries(self.root)

    def _changed(self, entry: CacheEntry) -> str | None:
        """What differs in the checkout from what the entry records, or None."""
        return changed(self.runner, self.root, entry)

    def _usable(self, entry: CacheEntry) -> bool:
        """A cached entry is reused only as it was recorded: else it is removed (and said)."""
        reason = self._changed(entry)
        if reason is None:
            return True
        if reason == OLDER_CHECKOUT:
            self.repaired[entry.key] = (
                f"the cached checkout of {entry_label(entry)} at {entry.path} was a worktree of "
                "your repository, made by an older perflab: it was removed (with git's record of "
                "it in your repository) and checked out again in perflab's own clone"
            )
        else:
            since = "built" if entry.status is CacheStatus.BUILT else "checked out"
            self.repaired[entry.key] = (
                f"the cached checkout of {entry_label(entry)} at {entry.path} was changed since it "
                f"was {since} ({reason}): it was checked out and built again"
            )
        discard_entry(self.runner, self.root, entry.repository, entry.key)
        return False

    def _cached(self, key: str) -> CacheEntry | None:
        """The entry under `key` when it can be reused, holding its lock shared; else None,
        holding it exclusive (so this run is the one to check it out and build it)."""
        self.locks.hold(key, exclusive=False)
        cached = load_entry(self.root, key)
        if cached is not None and cached.ready:
            if self._changed(cached) is None:
                return cached
        self.locks.hold(key, exclusive=True)  # another run may have built it meanwhile
        cached = load_entry(self.root, key)
        if cached is not None and self._usable(cached):
            if cached.ready:
                self.locks.hold(key, exclusive=False)
                return cached
            return cached
        return None

    # ---- checking out

    def checkout(
        self, repository: str, base: ResolvedRef, changes: Sequence[Change], build: str | None
    ) -> tuple[CacheEntry, bool]:
        """A checkout of `base` with `changes` applied, from the cache when it is there.
        Returns the entry and whether it came from the cache. The entry's lock is held: shared
        when it is ready, exclusive when it still has to be built (build() shares it then)."""
        if not changes:
            cached = self._cached(cache_key(repository, base.tree, build))
            if cached is not None:
                return cached, cached.ready
        clone = self._clone(repository)
        name = f"tmp-{uuid.uuid4().hex[:12]}"
        scratch = self.root / name
        self.locks.hold(name, exclusive=True)  # prune leaves a scratch checkout in use alone
        try:
            wanted = _Wanted(repository, base, tuple(changes), build)
            return self._checkout_into(wanted, clone, scratch)
        finally:
            self.locks.release(name)
            (self.root / f"{name}.lock").unlink(missing_ok=True)

    def _checkout_into(
        self, wanted: _Wanted, clone: Path, scratch: Path
    ) -> tuple[CacheEntry, bool]:
        """`wanted` checked out in `scratch` and moved into the cache under its key (or the
        cached entry, when applying the changes gave a tree already there)."""
        repository, base, changes, build = (
            wanted.repository,
            wanted.base,
            wanted.changes,
            wanted.build,
        )
        add_worktree(self.runner, clone, scratch, base)
        try:
            tree = apply_changes(self.runner, scratch, base, changes) if changes else base.tree
            key = cache_key(repository, tree, build)
            if changes:
                cached = self._cached(key)
                if cached is not None:
                    remove_worktree(self.runner, self.root, repository, scratch)
                    return cached, cached.ready
            final = move_into_place(self.runner, self.root, repository, scratch, key, wanted.label)
        except BaseException:
            remove_worktree(self.runner, self.root, repository, scratch)
            raise
        try:  # after the move: git moves no worktree with submodules
            update_submodules(self.runner, self.locks, final, base, clone)
        except BaseException:
            remove_worktree(self.runner, self.root, repository, final)
            raise
        entry = CacheEntry(
            key=key,
            path=final,
            repository=repository,
            ref=base.ref,
            commit=base.commit,
            tree=tree,
            build=build,
            status=CacheStatus.CHECKED_OUT,
            changes=tuple(c.name for c in changes),
            created_at=time.time(),
        )
        save_entry(self.root, entry)
        if build is None:
            self.locks.hold(key, exclusive=False)
        return entry, False

    def build(
        self,
        entry: CacheEntry,
        *,
        subdirectory: str | None,
        env: Mapping[str, str],
        timeout_s: float,
        variant: str,
    ) -> CacheEntry:
        """Run the build command in the checkout (once: a built entry is returned as it is).
        A build that moves the checkout (HEAD, tracked files) or changes the repository's refs
        fails: what it left would not be the commit asked for; refs are put back."""
        if entry.build is None or entry.status is CacheStatus.BUILT:
            return entry
        self.locks.hold(entry.key, exclusive=True)
        cwd = entry.path / subdirectory if subdirectory else entry.path
        refs_before = self._refs(entry.repository)
        started = time.monotonic()
        done = run_build(self.runner, entry.build, env=dict(env), cwd=str(cwd), timeout_s=timeout_s)
        elapsed_s = time.monotonic() - started
        if done.left:
            self.stopped[entry.key] = done.left
        output = (done.stdout + done.stderr).strip()[-OUTPUT_TAIL_CHARS:]
        moved = self._changed(entry) if done.ok else None
        refs = self._restore_refs(entry.repository, refs_before)
        if refs or moved:
            discard_entry(self.runner, self.root, entry.repository, entry.key)
            self.locks.release(entry.key)
            raise _moved_by_build(entry, moved, refs, variant=variant, output=output)
        built = self._built(entry, done, elapsed_s, output)
        self.locks.hold(entry.key, exclusive=False)
        if not done.ok:
            # a build that deleted its checkout (or its .git file) left nothing to keep:
            # the entry goes, and git's record of the worktree with it
            if not (entry.path / ".git").exists():
                discard_entry(self.runner, self.root, entry.repository, entry.key)
            raise _build_failed(entry, done, timeout_s, variant=variant, output=output)
        return built

    def _built(
        self, entry: CacheEntry, done: Completed, elapsed_s: float, output: str
    ) -> CacheEntry:
        """The entry as its build left it, saved."""
        built = CacheEntry(
            **{
                **{k: getattr(entry, k) for k in entry.__dataclass_fields__},
                "status": CacheStatus.BUILT if done.ok else CacheStatus.FAILED,
                "build_seconds": elapsed_s,
                "output": output,
                "outputs_digest": outputs_digest(self.runner, entry.path) if done.ok else None,
            }
        )
        save_entry(self.root, built)
        return built

    def _refs(self, repository: str) -> dict[str, str]:
        return refs_of(self.runner, repository)

    def _restore_refs(self, repository: str, before: Mapping[str, str]) -> str:
        """Put back the refs a build created, moved or deleted; what it did, or ''."""
        after = self._refs(repository)
        said = []
        for name in sorted(set(before) | set(after)):
            old, new = before.get(name), after.get(name)
            if old == new:
                continue
            if old is None:
                assert new is not None
                run_git(self.runner, repository, "update-ref", "-d", name, new)
                said.append(f"created {name}")
            elif new is None:
                run_git(self.runner, repository, "update-ref", name, old, "0" * len(old))
                said.append(f"deleted {name}")
            else:
                run_git(self.runner, repository, "update-ref", name, old, new)
                said.append(f"moved {name}")
        return ", ".join(said)

    # ---- pruning

    def prune(self) -> list[CacheEntry]:
        """Remove every entry (its worktree, and git's record of it) that no run is using;
        those in use are left, in `skipped`. A clone no entry uses any more goes too."""
        pruner = CachePruner(self.root, self.runner, self.locks)
        removed = pruner.prune()
        self.skipped = pruner.skipped
        return removed


def _build_failed(
    entry: CacheEntry, done: Completed, timeout_s: float, *, variant: str, output: str
) -> BenchmarkFailedError:
    how = done.describe_failure()
    if done.timed_out:
        how += f" after {timeout_s:g} s"
    return BenchmarkFailedError(
        f"the build {entry.build!r} of {entry_label(entry)} {how}",
        hint="fix the build at that ref (its output is above); the other variants are "
        "measured" + ("; a longer build needs --build-timeout" if done.timed_out else ""),
        variant=variant,
        detail=output or None,
    )


def _moved_by_build(
    entry: CacheEntry, moved: str | None, refs: str, *, variant: str, output: str
) -> BenchmarkFailedError:
    what = "; ".join(
        part
        for part in (
            f"the checkout moved ({moved})" if moved else "",
            f"it changed your repository's refs ({refs}); perflab put them back" if refs else "",
        )
        if part
    )
    return BenchmarkFailedError(
        f"the build {entry.build!r} of {entry_label(entry)} changed what it was asked to "
        f"build: {what}; it is not measured, as it would not be {entry.commit[:10]}",
        hint="a build must build the checked-out files as they are: no git checkout, "
        "reset, commit or branch in it (to measure another commit, give it as git=REF)",
        variant=variant,
        detail=output or None,
    )
