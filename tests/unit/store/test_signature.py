"""A store another perflab is making looks foreign to an immutable read that catches it half-way
(its tables, not yet its version): the verdict "not a perflab store" stands only for a file that
did not change while it was read."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from perflab.records.errors import StoreError
from perflab.store import signature
from perflab.store.signature import Kind


def test_a_file_that_changed_while_read_as_foreign_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    path.write_bytes(b"")
    reads: list[int] = []

    def half_made_then_done(at: Path, uri: str) -> Kind:
        reads.append(1)
        if len(reads) == 1:
            os.utime(at, ns=(1, 1))  # the other perflab wrote while this one read
            raise StoreError("not a perflab store: half made")
        return Kind.PERFLAB

    assert signature.store_kind(path, pauses_s=(0.0, 0.0), read=half_made_then_done) is Kind.PERFLAB
    assert len(reads) == 2


def test_another_programs_file_is_refused_after_one_look_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE notes (x)")
    connection.commit()
    connection.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="is not a perflab store"):
        signature.store_kind(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no -wal, no -shm made
