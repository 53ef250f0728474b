"""store.location: what a --store location names, for callers outside store/."""

from __future__ import annotations

from pathlib import Path

from perflab.store import StoreKind, location_facts


def test_a_url_is_a_server_that_exists_and_is_made_when_read() -> None:
    facts = location_facts("postgresql://team:secret@db.example/perflab")
    assert facts.kind is StoreKind.POSTGRESQL
    assert not facts.is_file and facts.exists and facts.create_to_read
    assert "secret" not in facts.shown and "db.example" in facts.shown


def test_a_file_not_made_yet_holds_no_runs(tmp_path: Path) -> None:
    facts = location_facts(tmp_path / "new.db")
    assert facts.kind is StoreKind.SQLITE and facts.is_file
    assert not facts.exists and not facts.create_to_read


def test_a_file_made_already_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(b"")
    facts = location_facts(str(path))
    assert facts.exists and not facts.create_to_read and facts.shown == str(path)
