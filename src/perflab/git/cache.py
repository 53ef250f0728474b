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

import fcntl
import hashlib
import json
import os
import re
import stat
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.git.clone import CLONES, clone_folder, prepare_clone, refs_of
from perflab.git.repo import GitError, ResolvedRef, git_environment, run_git
from perflab.machine.own_files import own_folder, remove_tree, replace_file
from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.records.errors import BenchmarkFailedError

OUTPUT_TAIL_CHARS = 4000
LOCK_POLL_S = 0.2
# cloning submodules can fetch from their remotes
SUBMODULE_TIMEOUT_S = 600.0
# what cache_key makes: an entry's name is never a path
_KEY = re.compile(r"[0-9a-f]{20}")
# _changed's reason for an entry an older perflab made as a worktree of the user's repository
OLDER_CHECKOUT = "it is a worktree of your repository"


def default_cache_dir() -> Path:
    """$PERFLAB_CACHE_DIR, else $XDG_CACHE_HOME/perflab/builds, else ~/.cache/perflab/builds:
    outside the repository, so checkouts never show up in the user's `git status`."""
    explicit = os.environ.get("PERFLAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "perflab" / "builds"


@dataclass(frozen=True)
class Change:
    """A change applied on top of a base: a commit (its diff against its parent) or a patch."""

    name: str
    source: str  # the commit id, or the patch file's path
    kind: str  # "commit" or "patch"
    patch: str  # the diff text

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.patch.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CacheEntry:
    key: str
    path: Path  # the checkout
    repository: str
    ref: str
    commit: str
    tree: str
    build: str | None
    status: str  # "checked-out", "built", "failed"
    changes: tuple[str, ...] = ()
    created_at: float = 0.0
    build_seconds: float | None = None
    output: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    # sha256 of the build's outputs (untracked files) when it was built; None: not recorded
    outputs_digest: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "path": str(self.path),
            "repository": self.repository,
            "ref": self.ref,
            "commit": self.commit,
            "tree": self.tree,
            "build": self.build,
            "status": self.status,
            "changes": list(self.changes),
            "created_at": self.created_at,
            "build_seconds": self.build_seconds,
            "output": self.output,
            "outputs_digest": self.outputs_digest,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CacheEntry:
        return cls(
            key=str(data["key"]),
            path=Path(data["path"]),
            repository=str(data["repository"]),
            ref=str(data.get("ref", "")),
            commit=str(data.get("commit", "")),
            tree=str(data.get("tree", "")),
            build=data.get("build"),
            status=str(data.get("status", "")),
            changes=tuple(data.get("changes", ())),
            created_at=float(data.get("created_at", 0.0)),
            build_seconds=data.get("build_seconds"),
            output=str(data.get("output", "")),
            outputs_digest=data.get("outputs_digest"),
        )


def cache_key(repository: str, tree: str, build: str | None) -> str:
    text = "\0".join((os.path.realpath(repository), tree, build or ""))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


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
    def __init__(
        self,
        root: str | Path,
        runner: ProcessRunner,
        *,
        on_wait: Callable[[str], None] | None = None,
        lock_wait_s: float = 3600.0,
    ) -> None:
        self.root = Path(root)
        self.runner = runner
        self.on_wait = on_wait  # told once when another run holds an entry this one needs
        self.lock_wait_s = lock_wait_s
        self._locks: dict[str, tuple[int, bool]] = {}  # name -> (fd, exclusive)
        # what was found wrong with a cached entry and repaired, per key (said to the user)
        self.repaired: dict[str, str] = {}
        self.skipped: list[CacheEntry] = []  # prune: entries another run is using
        self.stopped: dict[str, int] = {}  # per key: processes its build left, stopped
        self._cloned: set[str] = set()  # repositories whose clone this run brought up to date

    # ---- locks

    def _lock(self, name: str, *, exclusive: bool, wait: bool = True) -> bool:
        """Hold `<root>/<name>.lock` shared or exclusive until release/close. False when not
        waiting and another run holds it. Waiting is bounded by lock_wait_s."""
        held = self._locks.get(name)
        if held is not None and held[1] == exclusive:
            return True
        if held is not None and not exclusive:  # exclusive -> shared never waits
            fcntl.flock(held[0], fcntl.LOCK_SH)
            self._locks[name] = (held[0], False)
            return True
        if held is not None:  # shared -> exclusive: flock drops the shared lock to convert
            self._release(name)
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{name}.lock"
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + self.lock_wait_s
        told = False
        while (fd := _try_flock(path, mode)) is None:
            if not wait:
                return False
            if time.monotonic() > deadline:
                raise GitError(
                    f"the cached checkout {self.root / name} is in use by another perflab "
                    f"run: waited {self.lock_wait_s:g} s for it",
                    hint="let the other run finish, or pass --cache-dir DIR to use another cache",
                )
            if not told and self.on_wait is not None:
                self.on_wait(
                    f"waiting for another perflab run using the cached checkout {self.root / name}"
                )
                told = True
            time.sleep(LOCK_POLL_S)
        self._locks[name] = (fd, exclusive)
        return True

    def _release(self, name: str) -> None:
        held = self._locks.pop(name, None)
        if held is not None:
            os.close(held[0])

    def close(self) -> None:
        """Release every entry this run used (the process ending does it too)."""
        for name in list(self._locks):
            self._release(name)

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
        self._lock(name, exclusive=False)
        self._lock(f"{name}-update", exclusive=True)
        try:
            prepare_clone(self.runner, repository, folder)
        finally:
            self._release(f"{name}-update")
        self._cloned.add(repository)
        return folder

    def _clones(self) -> list[Path]:
        """The clones in the cache (folders named as clone_folder names them)."""
        folder = self.root / CLONES
        if not _is_real_folder(folder):
            return []
        return sorted(p for p in folder.iterdir() if _KEY.fullmatch(p.name) and _is_real_folder(p))

    # ---- reading

    def entries(self) -> list[CacheEntry]:
        if not self.root.is_dir():
            return []
        found = []
        for meta in sorted(self.root.glob("*.json")):
            entry = self._read(meta)
            if entry is not None:  # else half-written or not perflab's: prune leaves it
                found.append(entry)
        return sorted(found, key=lambda e: e.created_at)

    def _read(self, meta: Path) -> CacheEntry | None:
        """The entry `meta` describes, as one of this cache's own folders: its key is the
        file's name and its checkout `<root>/<key>`, whatever the file says (a description
        naming a folder elsewhere would have perflab build, measure and remove there)."""
        try:
            entry = CacheEntry.from_json(json.loads(meta.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if entry.key != meta.stem or not _KEY.fullmatch(entry.key):
            return None
        own = self.root / entry.key
        return entry if entry.path == own else replace(entry, path=own)

    def _load(self, key: str) -> CacheEntry | None:
        meta = self.root / f"{key}.json"
        if not meta.is_file():
            return None
        entry = self._read(meta)
        return entry if entry is not None and _is_real_folder(entry.path) else None

    def _save(self, entry: CacheEntry) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps(entry.to_json(), indent=2) + "\n"
        replace_file(self.root / f"{entry.key}.json", text.encode())

    # ---- verifying

    def _changed(self, entry: CacheEntry) -> str | None:
        """What differs in the checkout from what the entry records, or None."""
        if not (entry.path / ".git").exists():
            return "its folder or its .git file was deleted"
        if _outside_clone(entry.path, clone_folder(self.root, entry.repository)):
            return OLDER_CHECKOUT
        head = run_git(self.runner, entry.path, "rev-parse", "--verify", "-q", "HEAD")
        if not head.ok or head.stdout.strip() != entry.commit:
            now = head.stdout.strip()[:10] or "no commit"
            return f"its HEAD is at {now}, not at {entry.commit[:10]}"
        diff = run_git(
            self.runner, entry.path, "diff", "--no-ext-diff", "--name-only", entry.tree, "--"
        )
        if not diff.ok:
            return "git cannot compare it with its tree: " + diff.stderr.strip()[-300:]
        files = diff.stdout.split()
        if files:
            return (
                f"tracked files differ from the tree {entry.tree[:10]}: "
                + ", ".join(files[:5])
                + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            )
        if entry.status == "built" and entry.build is not None:
            digest = self._outputs_digest(entry.path)
            if entry.outputs_digest is None:
                return "it records no digest of its build's outputs"
            if digest != entry.outputs_digest:
                return (
                    "its build's outputs changed since the build (a file was changed, "
                    "truncated, added or removed)"
                )
        return None

    def _outputs_digest(self, path: Path) -> str:
        """sha256 over the names and contents of the untracked files (the build's outputs)."""
        listed = run_git(self.runner, path, "ls-files", "-z", "--others")
        digest = hashlib.sha256()
        for name in sorted(n for n in listed.stdout.split("\0") if n):
            file = path / name
            digest.update(name.encode(errors="surrogateescape") + b"\0")
            try:
                if file.is_symlink():
                    digest.update(b"link:" + os.readlink(file).encode(errors="surrogateescape"))
                else:
                    with file.open("rb") as handle:
                        for block in iter(lambda: handle.read(1 << 20), b""):
                            digest.update(block)
            except OSError as error:
                digest.update(f"unreadable:{error.errno}".encode())
            digest.update(b"\0")
        return digest.hexdigest()

    def _usable(self, entry: CacheEntry) -> bool:
        """A cached entry is reused only as it was recorded: else it is removed (and said)."""
        reason = self._changed(entry)
        if reason is None:
            return True
        if reason == OLDER_CHECKOUT:
            self.repaired[entry.key] = (
                f"the cached checkout of {_label(entry)} at {entry.path} was a worktree of your "
                "repository, made by an older perflab: it was removed (with git's record of it "
                "in your repository) and checked out again in perflab's own clone"
            )
        else:
            self.repaired[entry.key] = (
                f"the cached checkout of {_label(entry)} at {entry.path} was changed since it "
                f"was {'built' if entry.status == 'built' else 'checked out'} ({reason}): it "
                "was checked out and built again"
            )
        self._discard(entry.repository, entry.key)
        return False

    def _discard(self, repository: str, key: str, *, everywhere: bool = False) -> None:
        self._remove_worktree(repository, self.root / key, everywhere=everywhere)
        (self.root / f"{key}.json").unlink(missing_ok=True)

    def _cached(self, key: str) -> CacheEntry | None:
        """The entry under `key` when it can be reused, holding its lock shared; else None,
        holding it exclusive (so this run is the one to check it out and build it)."""
        self._lock(key, exclusive=False)
        cached = self._load(key)
        if cached is not None and (cached.status == "built" or cached.build is None):
            if self._changed(cached) is None:
                return cached
        self._lock(key, exclusive=True)  # another run may have built it meanwhile
        cached = self._load(key)
        if cached is not None and self._usable(cached):
            if cached.status == "built" or cached.build is None:
                self._lock(key, exclusive=False)
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
                return cached, cached.status == "built" or cached.build is None
        clone = self._clone(repository)
        name = f"tmp-{uuid.uuid4().hex[:12]}"
        scratch = self.root / name
        self._lock(name, exclusive=True)  # prune leaves a scratch checkout in use alone
        try:
            wanted = _Wanted(repository, base, tuple(changes), build)
            return self._checkout_into(wanted, clone, scratch)
        finally:
            self._release(name)
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
        self._add_worktree(clone, scratch, base)
        try:
            tree = self._apply(scratch, base, changes) if changes else base.tree
            key = cache_key(repository, tree, build)
            if changes:
                cached = self._cached(key)
                if cached is not None:
                    self._remove_worktree(repository, scratch)
                    return cached, cached.status == "built" or cached.build is None
            final = self._move_into_place(repository, scratch, key, wanted.label)
        except BaseException:
            self._remove_worktree(repository, scratch)
            raise
        try:  # after the move: git moves no worktree with submodules
            self._submodules(final, base, clone)
        except BaseException:
            self._remove_worktree(repository, final)
            raise
        entry = CacheEntry(
            key=key,
            path=final,
            repository=repository,
            ref=base.ref,
            commit=base.commit,
            tree=tree,
            build=build,
            status="checked-out",
            changes=tuple(c.name for c in changes),
            created_at=time.time(),
        )
        self._save(entry)
        if build is None:
            self._lock(key, exclusive=False)
        return entry, False

    def _add_worktree(self, clone: Path, scratch: Path, base: ResolvedRef) -> None:
        # the commit is the user's, read through the clone's alternates
        added = run_git(
            self.runner, clone, "worktree", "add", "--detach", "--force", str(scratch),
            base.commit,
        )  # fmt: skip
        if not added.ok:
            raise GitError(
                f"cannot check out {base.ref} ({base.short}) into a worktree",
                detail=(added.stdout + added.stderr).strip() or None,
                hint="git worktree add failed; see its output above",
            )

    def _submodules(self, scratch: Path, base: ResolvedRef, clone: Path) -> None:
        """The submodules checked out as the commit records them, as a clone has them after
        `git submodule update --init --recursive` (a worktree starts with empty folders)."""
        if not (scratch / ".gitmodules").is_file():
            return
        # one run at a time: `submodule init` writes the clone's config, which git locks
        update = f"{CLONES}/{clone.name}-update"
        self._lock(update, exclusive=True)
        try:
            done = run_git(
                self.runner, scratch, "submodule", "update", "--init", "--recursive", "--quiet",
                timeout_s=SUBMODULE_TIMEOUT_S,
            )  # fmt: skip
        finally:
            self._release(update)
        if not done.ok:
            raise GitError(
                f"cannot check out the submodules of {base.ref} ({base.short}): git submodule "
                f"update {done.describe_failure()}",
                detail=(done.stdout + done.stderr).strip()[-OUTPUT_TAIL_CHARS:] or None,
                hint="`git submodule update --init --recursive` must work in your clone "
                "(perflab runs it in each checkout: the submodules' URLs must be reachable)",
            )

    def _move_into_place(self, repository: str, scratch: Path, key: str, label: str) -> Path:
        """The scratch worktree moved to the entry's own folder, `<root>/<key>`."""
        final = self.root / key
        # left behind without its description, or registered in git but gone (the cache
        # folder was removed): cleared, or git refuses to move a worktree there
        self._remove_worktree(repository, final)
        clone = clone_folder(self.root, repository)
        moved = run_git(self.runner, clone, "worktree", "move", str(scratch), str(final))
        if not moved.ok:
            raise GitError(
                f"cannot move the worktree of {label}",
                detail=moved.stderr.strip() or None,
            )
        return final

    def _apply(self, scratch: Path, base: ResolvedRef, changes: Sequence[Change]) -> str:
        """Applies the changes in order to the checkout at `scratch`; the tree they make."""
        for change in changes:
            applied = self.runner.run(
                LaunchSpec(
                    argv=("git", "apply", "--index", "--whitespace=nowarn", "-"),
                    cwd=str(scratch),
                    env=git_environment(),
                ),
                timeout_s=120.0,
                stdin_text=change.patch,
            )
            if not applied.ok:
                raise GitError(
                    f"change {change.name} does not apply to {base.ref} ({base.short})",
                    detail=(applied.stdout + applied.stderr).strip()[-OUTPUT_TAIL_CHARS:] or None,
                    hint="rebase the change onto that base, or leave the base out",
                )
        return run_git(self.runner, scratch, "write-tree").stdout.strip()

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
        if entry.build is None or entry.status == "built":
            return entry
        self._lock(entry.key, exclusive=True)
        cwd = entry.path / subdirectory if subdirectory else entry.path
        refs_before = self._refs(entry.repository)
        started = time.monotonic()
        done = self.runner.run(
            LaunchSpec(argv=("/bin/sh", "-c", entry.build), env=dict(env), cwd=str(cwd)),
            timeout_s=timeout_s,
        )
        elapsed_s = time.monotonic() - started
        if done.left:
            self.stopped[entry.key] = done.left
        output = (done.stdout + done.stderr).strip()[-OUTPUT_TAIL_CHARS:]
        moved = self._changed(entry) if done.ok else None
        refs = self._restore_refs(entry.repository, refs_before)
        if refs or moved:
            self._discard(entry.repository, entry.key)
            self._release(entry.key)
            raise _moved_by_build(entry, moved, refs, variant=variant, output=output)
        built = self._built(entry, done, elapsed_s, output)
        self._lock(entry.key, exclusive=False)
        if not done.ok:
            # a build that deleted its checkout (or its .git file) left nothing to keep:
            # the entry goes, and git's record of the worktree with it
            if not (entry.path / ".git").exists():
                self._discard(entry.repository, entry.key)
            how = done.describe_failure()
            if done.timed_out:
                how += f" after {timeout_s:g} s"
            raise BenchmarkFailedError(
                f"the build {entry.build!r} of {_label(entry)} {how}",
                hint="fix the build at that ref (its output is above); the other variants are "
                "measured" + ("; a longer build needs --build-timeout" if done.timed_out else ""),
                variant=variant,
                detail=output or None,
            )
        return built

    def _built(
        self, entry: CacheEntry, done: Completed, elapsed_s: float, output: str
    ) -> CacheEntry:
        """The entry as its build left it, saved."""
        built = CacheEntry(
            **{
                **{k: getattr(entry, k) for k in entry.__dataclass_fields__},
                "status": "built" if done.ok else "failed",
                "build_seconds": elapsed_s,
                "output": output,
                "outputs_digest": self._outputs_digest(entry.path) if done.ok else None,
            }
        )
        self._save(built)
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
        removed = []
        self.skipped = []
        repositories = set()
        for entry in self.entries():
            if not self._lock(entry.key, exclusive=True, wait=False):
                self.skipped.append(entry)
                continue
            try:
                # everywhere: an older perflab's entry is a worktree of the user's repository
                self._discard(entry.repository, entry.key, everywhere=True)
                (self.root / f"{entry.key}.lock").unlink(missing_ok=True)
            finally:
                self._release(entry.key)
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

    def _prune_clones(self) -> None:
        """Remove the clones no entry uses and no run holds (with their lock files), and the
        half-made ones a killed run left beside a clone."""
        for clone in self._clones():
            name = f"{CLONES}/{clone.name}"
            if not self._lock(name, exclusive=True, wait=False):
                continue  # a run is using it: it may be making an entry there now
            try:
                for leftover in clone.parent.glob(f"{clone.name}.new-*"):
                    remove_tree(leftover)
                # entries are made only while a run holds the clone: none can appear now
                if any(clone_folder(self.root, e.repository) == clone for e in self.entries()):
                    continue
                remove_tree(clone)
                (clone.parent / f"{clone.name}-update.lock").unlink(missing_ok=True)
                (clone.parent / f"{clone.name}.lock").unlink(missing_ok=True)
            finally:
                self._release(name)

    def _prune_scratch(self) -> list[Path]:
        """Remove the scratch checkouts (`tmp-*`) that no run is using; their paths."""
        gone = []
        for leftover in self.root.glob("tmp-*"):
            if leftover.suffix in (".lock", ".tmp") or not _is_real_folder(leftover):
                continue
            if not self._lock(leftover.name, exclusive=True, wait=False):
                continue  # a run is checking out there
            try:
                remove_tree(leftover)
                (self.root / f"{leftover.name}.lock").unlink(missing_ok=True)
            finally:
                self._release(leftover.name)
            gone.append(leftover)
        return gone

    def _remove_worktree(self, repository: str, path: Path, *, everywhere: bool = False) -> None:
        """The checkout at `path` removed with git's record of it, in perflab's clone and, for
        an older perflab's worktree of the user's repository, there (by path). `everywhere`:
        in both, whatever its .git file says."""
        clone = clone_folder(self.root, repository)
        linked = os.path.islink(path)
        older = everywhere or _outside_clone(path, clone)
        # the folder first: git then clears its record of a worktree whose folder is gone,
        # where it refuses one whose .git file a build deleted (leaving a 'prunable' record)
        remove_tree(path)  # a link goes as a link: what it points to is not perflab's
        if linked:
            return
        if _is_real_folder(clone):
            run_git(self.runner, clone, "worktree", "remove", "--force", str(path))
        if older and os.path.isdir(repository):
            run_git(self.runner, repository, "worktree", "remove", "--force", str(path))


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
        f"the build {entry.build!r} of {_label(entry)} changed what it was asked to "
        f"build: {what}; it is not measured, as it would not be {entry.commit[:10]}",
        hint="a build must build the checked-out files as they are: no git checkout, "
        "reset, commit or branch in it (to measure another commit, give it as git=REF)",
        variant=variant,
        detail=output or None,
    )


def _try_flock(path: Path, mode: int) -> int | None:
    """The lock file at `path` opened and locked with `mode`, or None while another run
    holds it."""
    while True:
        # never follow a link, never truncate: the file's content is never used
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        # prune may have removed the file while this run waited on it: lock the one there
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)


def _outside_clone(checkout: Path, clone: Path) -> bool:
    """Whether the checkout is a worktree of another repository than perflab's clone: its
    .git file names a git folder elsewhere (an older perflab's worktree of the user's
    repository), or is gone (either). False when there is no checkout."""
    if not _is_real_folder(checkout):
        return False
    try:
        text = (checkout / ".git").read_text(errors="replace")
    except OSError:
        return True
    named = text.partition("gitdir:")[2].strip()  # relative to the checkout, when relative
    gitdir = Path(os.path.realpath(os.path.join(checkout, named)))
    return not gitdir.is_relative_to(os.path.realpath(clone))


def _is_real_folder(path: Path) -> bool:
    """A directory, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _label(entry: CacheEntry) -> str:
    changes = "".join(f" + {c}" for c in entry.changes)
    return f"{entry.ref} ({entry.commit[:10]}){changes}"
