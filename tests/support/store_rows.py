"""What a store perflab wrote in another process holds, read-only, while it may still write:
the fault and process tests read the rows, not the CLI, so a broken CLI cannot hide a loss."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

# where `perflab` with no --store keeps its runs, under the folder it ran in
STORE = Path(".perflab") / "perflab.db"


def runs(cwd: Path) -> list[tuple[int, str]]:
    """(id, status) of every run in the store perflab keeps under `cwd`."""
    path = cwd / STORE
    if not path.exists():
        return []
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            rows = connection.execute("SELECT id, status FROM runs ORDER BY id")
            return [(int(row[0]), str(row[1])) for row in rows]
        finally:
            connection.close()
    except sqlite3.Error:
        return []


def wait_for_run(cwd: Path, timeout_s: float = 120) -> None:
    """Until perflab has created its run in the store (measuring has begun)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if runs(cwd):
            return
        time.sleep(0.1)
    raise AssertionError("perflab created no run")


def samples(cwd: Path, run_id: int) -> int:
    connection = sqlite3.connect(f"file:{cwd / STORE}?mode=ro", uri=True, timeout=10)
    try:
        row = connection.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
        return int(row.fetchone()[0])
    finally:
        connection.close()


def samples_in_stores(folder: Path) -> int | None:
    """Samples held by the perflab stores under `folder`; None when there is none."""
    total: int | None = None
    for path in folder.rglob("*.db"):
        try:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                count = connection.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            finally:
                connection.close()
        except sqlite3.Error:
            continue
        total = (total or 0) + int(count)
    return total
