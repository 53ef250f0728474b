"""Checkouts and builds of git refs, cached by tree hash and build command.

Each entry is a linked worktree of the user's repository (`git worktree add --detach`), under
the cache directory, never the user's own tree: `<cache>/<key>/` is the checkout and
`<cache>/<key>.json` says what it holds (repository, ref, commit, tree, changes applied, build
command, build status and output). The key hashes the repository, the tree and the build
command, so a ref named in several cells, or measured again, is checked out and built once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.errors import BenchmarkFailedError
from perflab.git.repo import GitError, ResolvedRef, git_environment, run_git
from perflab.proc import LaunchSpec, ProcessRunner

OUTPUT_TAIL_CHARS = 4000


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
        )


def cache_key(repository: str, tree: str, build: str | None) -> str:
    text = "\0".join((os.path.realpath(repository), tree, build or ""))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class BuildCache:
    def __init__(self, root: str | Path, runner: ProcessRunner) -> None:
        self.root = Path(root)
        self.runner = runner

    # ---- reading

    def entries(self) -> list[CacheEntry]:
        if not self.root.is_dir():
            return []
        found = []
        for meta in sorted(self.root.glob("*.json")):
            try:
                found.append(CacheEntry.from_json(json.loads(meta.read_text())))
            except (OSError, ValueError, KeyError):
                continue  # a half-written entry: prune removes its directory anyway
        return sorted(found, key=lambda e: e.created_at)

    def _load(self, key: str) -> CacheEntry | None:
        meta = self.root / f"{key}.json"
        if not meta.is_file():
            return None
        try:
            entry = CacheEntry.from_json(json.loads(meta.read_text()))
        except (OSError, ValueError, KeyError):
            return None
        return entry if entry.path.is_dir() else None

    def _save(self, entry: CacheEntry) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        meta = self.root / f"{entry.key}.json"
        temporary = meta.with_suffix(".tmp")
        temporary.write_text(json.dumps(entry.to_json(), indent=2) + "\n")
        temporary.replace(meta)

    # ---- checking out

    def checkout(
        self, repository: str, base: ResolvedRef, changes: Sequence[Change], build: str | None
    ) -> tuple[CacheEntry, bool]:
        """A checkout of `base` with `changes` applied, from the cache when it is there.
        Returns the entry and whether it came from the cache."""
        label = base.ref + "".join(f"+{c.name}" for c in changes)
        if not changes:
            cached = self._load(cache_key(repository, base.tree, build))
            if cached is not None:
                return cached, True
        self.root.mkdir(parents=True, exist_ok=True)
        scratch = self.root / f"tmp-{uuid.uuid4().hex[:12]}"
        added = run_git(
            self.runner, repository, "worktree", "add", "--detach", "--force", str(scratch),
            base.commit,
        )  # fmt: skip
        if not added.ok:
            raise GitError(
                f"cannot check out {base.ref} ({base.short}) into a worktree",
                detail=(added.stdout + added.stderr).strip() or None,
                hint="git worktree add failed; see its output above",
            )
        try:
            tree = base.tree
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
                        detail=(applied.stdout + applied.stderr).strip()[-OUTPUT_TAIL_CHARS:]
                        or None,
                        hint="rebase the change onto that base, or leave the base out",
                    )
            if changes:
                written = run_git(self.runner, scratch, "write-tree")
                tree = written.stdout.strip()
            key = cache_key(repository, tree, build)
            cached = self._load(key)
            if cached is not None:
                self._remove_worktree(repository, scratch)
                return cached, True
            final = self.root / key
            if final.exists():  # left behind without its description: start again
                self._remove_worktree(repository, final)
            moved = run_git(self.runner, repository, "worktree", "move", str(scratch), str(final))
            if not moved.ok:
                raise GitError(
                    f"cannot move the worktree of {label}",
                    detail=moved.stderr.strip() or None,
                )
        except BaseException:
            self._remove_worktree(repository, scratch)
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
        """Run the build command in the checkout (once: a built entry is returned as it is)."""
        if entry.build is None or entry.status == "built":
            return entry
        cwd = entry.path / subdirectory if subdirectory else entry.path
        started = time.monotonic()
        done = self.runner.run(
            LaunchSpec(argv=("/bin/sh", "-c", entry.build), env=dict(env), cwd=str(cwd)),
            timeout_s=timeout_s,
        )
        output = (done.stdout + done.stderr).strip()[-OUTPUT_TAIL_CHARS:]
        built = CacheEntry(
            **{
                **{k: getattr(entry, k) for k in entry.__dataclass_fields__},
                "status": "built" if done.ok else "failed",
                "build_seconds": time.monotonic() - started,
                "output": output,
            }
        )
        self._save(built)
        if not done.ok:
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

    # ---- pruning

    def prune(self) -> list[CacheEntry]:
        """Remove every entry (its worktree, and git's record of it)."""
        removed = self.entries()
        repositories = {e.repository for e in removed}
        for entry in removed:
            self._remove_worktree(entry.repository, entry.path)
            (self.root / f"{entry.key}.json").unlink(missing_ok=True)
        if self.root.is_dir():
            for leftover in self.root.glob("tmp-*"):
                shutil.rmtree(leftover, ignore_errors=True)
        for repository in repositories:
            if os.path.isdir(repository):
                run_git(self.runner, repository, "worktree", "prune")
        return removed

    def _remove_worktree(self, repository: str, path: Path) -> None:
        if os.path.isdir(repository):
            run_git(self.runner, repository, "worktree", "remove", "--force", str(path))
        shutil.rmtree(path, ignore_errors=True)
        if os.path.isdir(repository):
            run_git(self.runner, repository, "worktree", "prune")


def _label(entry: CacheEntry) -> str:
    changes = "".join(f" + {c}" for c in entry.changes)
    return f"{entry.ref} ({entry.commit[:10]}){changes}"
