"""A run's watch on the store's file (store/sqlite_watch.py): a file removed while the run
writes stops the run, every run it held copied beside it; later writes refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from perflab.records.errors import StoreLostError
from perflab.store.migrations import MIGRATIONS, statements
from perflab.store.sqlite_file import device_inode
from perflab.store.sqlite_watch import FileWatch


def opened(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS:
        for statement in statements(step):
            connection.execute(statement)
    connection.execute(
        "INSERT INTO runs (id, created_at, status, perflab_version, experiment_json, machine_json)"
        " VALUES (1, 'now', 'running', '0', '{}', '{}')"
    )
    return connection


def test_writes_go_on_while_the_file_is_the_one_being_written(tmp_path: Path) -> None:
    store = tmp_path / "p.db"
    connection = opened(store)
    watch = FileWatch(connection, 1, store, device_inode(store))
    with watch.errors():
        connection.execute("SELECT 1")
    watch.written()
    FileWatch(connection, 1, None, None).written()  # an in-memory store: nothing to watch
    assert connection.execute("SELECT status FROM runs").fetchall() == [("running",)]
    connection.close()
    # nothing was taken for lost: no copy saved beside the file
    assert sorted(p.name for p in tmp_path.iterdir() if "recovered" in p.name) == []


def test_a_removed_file_stops_the_run_and_its_runs_are_saved_beside_it(tmp_path: Path) -> None:
    store = tmp_path / "p.db"
    connection = opened(store)
    watch = FileWatch(connection, 1, store, device_inode(store))
    store.unlink()
    with pytest.raises(StoreLostError, match="was removed while run 1 was being written") as lost:
        watch.written()
    recovered = tmp_path / "perflab-recovered-run1.db"
    assert f"saved in {recovered}" in str(lost.value) and "perflab show 1" in (
        lost.value.hint or ""
    )
    saved = sqlite3.connect(recovered)
    try:
        # ended in the copy as incomplete, with why (not left `running`)
        assert saved.execute("SELECT id, status, error FROM runs").fetchall() == [
            (1, "incomplete", "the store file was removed")
        ]
    finally:
        saved.close()
    with pytest.raises(StoreLostError), watch.errors():  # every later write is refused
        pass
    connection.close()
