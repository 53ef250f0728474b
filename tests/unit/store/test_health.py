"""`check_store` keeps saying why no run can be written, whatever else it finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.records.errors import StoreError
from perflab.store import health
from perflab.store.sqlite import SqliteStore


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "perflab.db"
    SqliteStore.open(path).close()
    return path


def test_the_reason_runs_cannot_be_written_survives_unreadable_run_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _store(tmp_path)
    monkeypatch.setattr(health, "read_only_reason", lambda path: "it is on a read-only filesystem")

    def no_run_ids(self: SqliteStore) -> list[int]:
        raise StoreError("the runs table cannot be read")

    monkeypatch.setattr(SqliteStore, "run_ids", no_run_ids)
    found = health.check_store(path, thorough=True)
    assert "the runs table cannot be read" in found.problems
    assert found.writable == "it is on a read-only filesystem"
    assert found.to_json()["cannot_write"] == "it is on a read-only filesystem"


def test_a_writable_intact_store_has_no_reason(tmp_path: Path) -> None:
    found = health.check_store(_store(tmp_path), thorough=True)
    assert not found.damaged and found.writable is None
