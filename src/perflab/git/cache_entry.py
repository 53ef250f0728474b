"""A cached checkout's record: what it holds (CacheEntry, the Changes applied), its key, and
its description `<cache>/<key>.json`, read and written.

An entry's folder is always `<cache>/<key>`, whatever its description says, so a description
naming a folder elsewhere never has perflab build, measure or remove there.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.machine.own_files import replace_file

# what cache_key makes: an entry's name is never a path
KEY = re.compile(r"[0-9a-f]{20}")


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


class CacheStatus(enum.StrEnum):
    """Where an entry's checkout stands: its value is what its description stores."""

    CHECKED_OUT = "checked-out"  # checked out; its build (if it has one) not yet run
    BUILT = "built"
    FAILED = "failed"  # its build failed: it is built again when asked for

    @classmethod
    def read(cls, value: object) -> CacheStatus:
        """The status a description stores; one this perflab does not know reads as not built
        (so the entry is built again rather than taken as ready)."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.CHECKED_OUT


@dataclass(frozen=True)
class CacheEntry:
    """One checkout in the build cache: what it was made from, where it is, and its build's
    state."""

    key: str
    path: Path  # the checkout
    repository: str
    ref: str
    commit: str
    tree: str
    build: str | None
    status: CacheStatus
    changes: tuple[str, ...] = ()
    created_at: float = 0.0
    build_seconds: float | None = None
    output: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    # sha256 of the build's outputs (untracked files) when it was built; None: not recorded
    outputs_digest: str | None = None

    @property
    def ready(self) -> bool:
        """Whether it can be measured as it is: built, or with nothing to build."""
        return self.status is CacheStatus.BUILT or self.build is None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "path": str(self.path),
            "repository": self.repository,
            "ref": self.ref,
            "commit": self.commit,
            "tree": self.tree,
            "build": self.build,
            "status": self.status.value,
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
            status=CacheStatus.read(data.get("status", "")),
            changes=tuple(data.get("changes", ())),
            created_at=float(data.get("created_at", 0.0)),
            build_seconds=data.get("build_seconds"),
            output=str(data.get("output", "")),
            outputs_digest=data.get("outputs_digest"),
        )


def cache_key(repository: str, tree: str, build: str | None) -> str:
    text = "\0".join((os.path.realpath(repository), tree, build or ""))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def read_entries(root: Path) -> list[CacheEntry]:
    """The entries described in `root`, oldest first."""
    if not root.is_dir():
        return []
    found = []
    for meta in sorted(root.glob("*.json")):
        entry = read_cache_entry(root, meta)
        if entry is not None:  # else half-written or not perflab's: prune leaves it
            found.append(entry)
    return sorted(found, key=lambda e: e.created_at)


def read_cache_entry(root: Path, meta: Path) -> CacheEntry | None:
    """The entry `meta` describes, as one of the cache's own folders: its key is the file's
    name and its checkout `<root>/<key>`, whatever the file says."""
    try:
        entry = CacheEntry.from_json(json.loads(meta.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if entry.key != meta.stem or not KEY.fullmatch(entry.key):
        return None
    own = root / entry.key
    return entry if entry.path == own else replace(entry, path=own)


def load_entry(root: Path, key: str) -> CacheEntry | None:
    """The entry under `key`, when its description and its checkout folder are both there."""
    meta = root / f"{key}.json"
    if not meta.is_file():
        return None
    entry = read_cache_entry(root, meta)
    return entry if entry is not None and is_real_folder(entry.path) else None


def save_entry(root: Path, entry: CacheEntry) -> None:
    root.mkdir(parents=True, exist_ok=True)
    text = json.dumps(entry.to_json(), indent=2) + "\n"
    replace_file(root / f"{entry.key}.json", text.encode())


def is_real_folder(path: Path) -> bool:
    """A directory, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def entry_label(entry: CacheEntry) -> str:
    changes = "".join(f" + {c}" for c in entry.changes)
    return f"{entry.ref} ({entry.commit[:10]}){changes}"
