"""Is a store intact, and if not, which of its runs can still be read? Read-only throughout."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.records.errors import StoreDamagedError, StoreError
from perflab.store.migrations import SCHEMA_VERSION
from perflab.store.sqlite import SqliteStore
from perflab.store.sqlite_file import QUICK_CHECK_MAX_BYTES, quick_check, read_only_reason


@dataclass(frozen=True)
class StoreHealth:
    """What `perflab doctor --check-store` found of a store: its checks, its runs, and whether
    runs can be written."""

    path: Path
    size_bytes: int
    check: str  # which SQLite check ran: integrity_check, quick_check, or why none did
    problems: tuple[str, ...]  # empty: the store is intact
    run_ids: tuple[int, ...] = ()
    unreadable_runs: tuple[int, ...] = ()
    statuses: Mapping[str, int] = field(default_factory=dict)
    schema_version: int | None = None
    writable: str | None = None  # why a run cannot be written here, or None

    @property
    def damaged(self) -> bool:
        return bool(self.problems)

    @property
    def readable_runs(self) -> tuple[int, ...]:
        return tuple(r for r in self.run_ids if r not in self.unreadable_runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "size_bytes": self.size_bytes,
            "check": self.check,
            "damaged": self.damaged,
            "problems": list(self.problems),
            "readable_runs": list(self.readable_runs),
            "unreadable_runs": list(self.unreadable_runs),
            "statuses": dict(self.statuses),
            "schema_version": self.schema_version,
            "schema_version_supported": SCHEMA_VERSION,
            "cannot_write": self.writable,
        }


def check_store(path: Path | str, *, thorough: bool = False) -> StoreHealth:
    """Check a store without changing it.

    Quick (before `list`, `show`, `compare`): PRAGMA quick_check on stores up to
    QUICK_CHECK_MAX_BYTES, and only when it finds damage, which runs are readable. Thorough
    (`perflab doctor --store`): PRAGMA integrity_check and every run read back whole.
    A missing file, or one that is not a perflab store, raises StoreError."""
    path = Path(path)
    store_or_error: SqliteStore | StoreDamagedError
    try:
        store_or_error = SqliteStore.open(path, create=False)
    except StoreDamagedError as error:
        store_or_error = error
    size = path.stat().st_size
    if thorough:
        check = "integrity_check"
    elif size <= QUICK_CHECK_MAX_BYTES:
        check = "quick_check"
    else:
        check = f"none (larger than {QUICK_CHECK_MAX_BYTES // 2**20} MiB: run perflab doctor)"
    problems = quick_check(path, thorough=thorough) if size else ()
    reason = read_only_reason(path)
    if isinstance(store_or_error, StoreDamagedError):
        return StoreHealth(
            path, size, check, problems or (store_or_error.message,), writable=reason
        )
    try:
        return _read_back(
            store_or_error, StoreHealth(path, size, check, problems, writable=reason), thorough
        )
    finally:
        store_or_error.close()


def _read_back(store: SqliteStore, found: StoreHealth, thorough: bool) -> StoreHealth:
    """`found` with the schema version and, when thorough or damaged, which runs read back."""
    version = int(store.connection.execute("PRAGMA user_version").fetchone()[0])
    if not thorough and not found.problems:
        return replace(found, schema_version=version)
    try:
        run_ids = tuple(store.run_ids())
    except StoreError as error:
        # the runs cannot be listed: why none can be written (found.writable) still holds
        return replace(found, problems=(*found.problems, error.message), schema_version=version)
    unreadable: list[int] = []
    statuses: Counter[str] = Counter()
    for run_id in run_ids:
        try:
            statuses[str(store.load_run(run_id).status)] += 1
        except StoreError:
            unreadable.append(run_id)
    problems = found.problems
    if unreadable and not problems:
        problems = (f"{len(unreadable)} run(s) cannot be read",)
    return replace(
        found,
        problems=problems,
        run_ids=run_ids,
        unreadable_runs=tuple(unreadable),
        statuses=dict(statuses),
        schema_version=version,
    )


def describe_runs(runs: tuple[int, ...]) -> str:
    """1, 2, 3, 5 -> '1-3, 5'."""
    if not runs:
        return "none"
    spans: list[tuple[int, int]] = []
    for run in runs:
        if spans and run == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], run)
        else:
            spans.append((run, run))
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
