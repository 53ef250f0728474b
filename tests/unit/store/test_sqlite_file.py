"""The SQLite store's file (store/sqlite_file.py): what may be a store (an SQLite file, a
regular file, no link where SQLite keeps its journals), a read-only connection with its schema
version, the page checks, and SQLite's failures as store errors that say why."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from perflab.records.errors import StoreDamagedError, StoreError
from perflab.store.sqlite_file import (
    check_is_sqlite,
    check_no_linked_journal,
    check_regular,
    connect_read_only,
    device_inode,
    quick_check,
    read_errors,
    read_only_reason,
    store_errors,
)


def database(path: Path, version: int = 3) -> Path:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE runs (id INTEGER)")
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()
    return path


def test_a_store_is_an_sqlite_file_and_something_else_is_refused(tmp_path: Path) -> None:
    check_is_sqlite(database(tmp_path / "p.db"))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(StoreError, match="is not an SQLite database"):
        check_is_sqlite(tmp_path / "notes.txt")
    with pytest.raises(StoreError, match="cannot read the store"):
        check_is_sqlite(tmp_path / "missing.db")


def test_a_store_is_a_regular_file_or_a_new_path(tmp_path: Path) -> None:
    check_regular(tmp_path / "new.db")
    check_regular(database(tmp_path / "p.db"))
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(StoreError, match="is a pipe"):
        check_regular(tmp_path / "pipe")
    with pytest.raises(StoreError, match="is a device"):
        check_regular(Path("/dev/null"))
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere.db")
    with pytest.raises(StoreError, match="which does not exist"):
        check_regular(tmp_path / "dangling")


def test_a_link_where_sqlite_keeps_its_journal_is_refused(tmp_path: Path) -> None:
    store = database(tmp_path / "p.db")
    check_no_linked_journal(store)
    (tmp_path / "p.db-wal").symlink_to(tmp_path / "victim")
    with pytest.raises(StoreError, match="where SQLite keeps its wal file"):
        check_no_linked_journal(store)


def test_a_read_only_connection_gives_the_schema_version(tmp_path: Path) -> None:
    connection, version, copied = connect_read_only(database(tmp_path / "p.db", version=2))
    try:
        assert (version, copied) == (2, None)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            connection.execute("INSERT INTO runs VALUES (1)")
    finally:
        connection.close()
    assert device_inode(tmp_path / "p.db") is not None
    assert device_inode(tmp_path / "missing.db") is None


def test_a_sound_file_has_nothing_wrong_and_a_damaged_one_says_so(tmp_path: Path) -> None:
    store = database(tmp_path / "p.db")
    assert quick_check(store) == () and quick_check(store, thorough=True) == ()
    data = bytearray(store.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the first page's b-tree: garbage
    store.write_bytes(bytes(data))
    assert quick_check(store) != ()


def test_sqlite_failures_are_store_errors_that_say_why(tmp_path: Path) -> None:
    with pytest.raises(StoreDamagedError), read_errors(tmp_path / "p.db"):
        raise sqlite3.DatabaseError("database disk image is malformed")
    with (
        pytest.raises(StoreError, match="cannot write to the store"),
        store_errors(tmp_path / "p.db"),
    ):
        raise sqlite3.OperationalError("database is locked")
    assert read_only_reason(None) is None
    assert read_only_reason(tmp_path / "p.db") is None  # a writable folder with room
