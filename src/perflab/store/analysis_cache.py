"""What the explanation lenses derive from one object file alone, kept across perflab runs.

Reading `libtorch_cpu.so`'s 500k symbols, demangling them, decoding its PLT, disassembling the
callers of hot code, asking llvm-symbolizer for inline frames and llvm-mca for a loop's
throughput all depend on the object's bytes (and the tool) only, yet took most of an asm run.
So each result is stored under a key made of:

- the **object's identity** (`debuginfo.object_identity`: its build-id, or the SHA-256 of its
  content when it has none) — never its path or modification time, which say nothing about the
  bytes (two venvs hold two files of one build; a rebuild in place keeps the path);
- what else the result depends on: the separate debug file's identity, the tool's identity
  (`debuginfo.tool_identity`: the tool binary's own build-id) and its options (the llvm-mca
  CPU model);
- `FORMAT`, bumped whenever a stored value's layout or meaning changes.

Entries are zlib-compressed JSON files `<root>/v<FORMAT>/<kind>/<hh>/<sha256 of the key>`,
each holding its full key, which is compared on reading. Writes go to a temporary file in the
same folder and are renamed over the entry, so two perflab processes filling one cache never
see half an entry. An entry that cannot be read, decompressed, parsed or whose key differs is a
miss (and is rewritten), never an error. The cache is bounded (`max_bytes`): `trim` removes the
least recently used entries (reading one touches it) and the folders of older formats.

Location: `$PERFLAB_ANALYSIS_CACHE_DIR`, else `$XDG_CACHE_HOME/perflab/analysis`, else
`~/.cache/perflab/analysis`. The asm lens's option `analysis_cache` (`--no-analysis-cache`)
bypasses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.machine.own_files import own_folder

# of the cache's entries (their folder's name): raise it when one changes shape, so older entries
# are misses, not errors
FORMAT = 1
DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB: libtorch_cpu.so's symbol table alone is ~40 MB compressed
_STALE_TEMPORARY_S = 3600.0  # a temporary file this old belongs to a process that died writing


def default_analysis_cache_dir() -> Path:
    """$PERFLAB_ANALYSIS_CACHE_DIR, else $XDG_CACHE_HOME/perflab/analysis, else
    ~/.cache/perflab/analysis."""
    explicit = os.environ.get("PERFLAB_ANALYSIS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "perflab" / "analysis"


@dataclass
class CacheStats:
    """What one process did with the cache (for notes and benchmarks, not stored)."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    ignored: int = 0  # entries that could not be read or were not what they claimed
    write_errors: int = 0


@dataclass(frozen=True)
class CacheUsage:
    """The analysis cache's size on disk against its limit, for `perflab cache`."""

    path: Path
    entries: int
    bytes: int
    max_bytes: int


@dataclass
class AnalysisCache:
    """A bounded on-disk cache of JSON values keyed by object identities (see the module).

    `root` None (or `enabled` False) makes every lookup a miss and every store a no-op, so
    callers need no second code path."""

    root: Path | None
    max_bytes: int = DEFAULT_MAX_BYTES
    stats: CacheStats = field(default_factory=CacheStats)

    @classmethod
    def default(cls, *, enabled: bool = True) -> AnalysisCache:
        return cls(default_analysis_cache_dir() if enabled else None)

    @classmethod
    def disabled(cls) -> AnalysisCache:
        return cls(None)

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _path(self, kind: str, key: Sequence[object]) -> tuple[Path, list[object]] | None:
        if self.root is None:
            return None
        full = [FORMAT, kind, *key]
        digest = hashlib.sha256(json.dumps(full, sort_keys=True).encode()).hexdigest()
        return self.root / f"v{FORMAT}" / kind / digest[:2] / digest, full

    def get(self, kind: str, key: Sequence[object]) -> Any | None:
        """The stored value, or None (not stored, unreadable, or another key's entry)."""
        where = self._path(kind, key)
        if where is None:
            return None
        path, full = where
        try:
            raw = path.read_bytes()
        except OSError:
            self.stats.misses += 1
            return None
        try:
            entry = json.loads(zlib.decompress(raw))
        except (zlib.error, ValueError):
            entry = None
        if not isinstance(entry, dict) or entry.get("key") != full or "value" not in entry:
            self.stats.ignored += 1
            self.stats.misses += 1
            return None
        try:
            os.utime(path)  # recently used: trimmed last
        except OSError:
            pass
        self.stats.hits += 1
        return entry["value"]

    def put(self, kind: str, key: Sequence[object], value: Any) -> None:
        """Store `value` (JSON-serialisable); failures to write are counted, never raised."""
        where = self._path(kind, key)
        if where is None:
            return
        path, full = where
        data = zlib.compress(json.dumps({"key": full, "value": value}).encode(), 1)
        try:
            # a link planted on the way is refused: the write would land outside the cache
            own_folder(path.parents[3], path.parent)  # <root>/v<FORMAT>/<kind>/<xx>/
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(data)
                os.replace(temporary, path)
            except BaseException:
                _remove(Path(temporary))
                raise
        except OSError:
            self.stats.write_errors += 1
            return
        self.stats.writes += 1

    def _entries(self) -> list[tuple[float, int, Path]]:
        """(last use, size, path) of every file under the root, temporaries included."""
        found: list[tuple[float, int, Path]] = []
        if self.root is None or not self.root.is_dir():
            return found
        for directory, _, files in os.walk(self.root):
            for name in files:
                path = Path(directory) / name
                try:
                    stat = path.stat()
                except OSError:
                    continue  # removed by another process meanwhile
                found.append((stat.st_mtime, stat.st_size, path))
        return found

    def usage(self) -> CacheUsage:
        entries = self._entries()
        return CacheUsage(
            path=self.root or default_analysis_cache_dir(),
            entries=sum(1 for *_, path in entries if not path.name.startswith(".tmp-")),
            bytes=sum(size for _, size, _ in entries),
            max_bytes=self.max_bytes,
        )

    def trim(self, *, now: float | None = None) -> int:
        """Remove entries of older formats, temporaries left by dead writers, then the least
        recently used entries until the cache is within `max_bytes`. Returns bytes removed."""
        now = time.time() if now is None else now
        current = None if self.root is None else self.root / f"v{FORMAT}"
        removed = 0
        kept: list[tuple[float, int, Path]] = []
        for used, size, path in self._entries():
            stale = path.name.startswith(".tmp-") and now - used > _STALE_TEMPORARY_S
            if stale or (current is not None and current not in path.parents):
                removed += size if _remove(path) else 0
            elif not path.name.startswith(".tmp-"):
                kept.append((used, size, path))
        total = sum(size for _, size, _ in kept)
        for _, size, path in sorted(kept, key=lambda entry: entry[0]):
            if total <= self.max_bytes:
                break
            if _remove(path):
                removed += size
                total -= size
        return removed

    def clear(self) -> int:
        """Remove every entry; returns the bytes removed."""
        return sum(size for _, size, path in self._entries() if _remove(path))


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except OSError:
        return False
    return True
