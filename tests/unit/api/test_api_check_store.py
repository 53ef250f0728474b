"""api.check_store asks store/ what a location is: a server is refused, a file is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab import api
from perflab.records.errors import ConfigError
from perflab.store import SqliteStore


def test_a_server_is_refused_with_its_password_hidden() -> None:
    with pytest.raises(ConfigError) as refused:
        api.check_store("postgresql://team:secret@db.example/perflab")
    assert "is a PostgreSQL store: doctor --store checks an SQLite" in str(refused.value)
    assert "secret" not in str(refused.value)


def test_a_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    SqliteStore.open(path).close()
    assert api.check_store(path) is not None
