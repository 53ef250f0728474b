"""store.location: what a --store location names, for callers outside store/."""

from __future__ import annotations

from pathlib import Path

from perflab.store import BACKENDS, StoreKind, backend_for, location_facts, store_location


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


def test_every_location_has_one_backend_and_the_file_is_the_last_resort() -> None:
    assert [backend.kind for backend in BACKENDS][-1] is StoreKind.SQLITE
    assert backend_for("postgres://x@y/z").kind is StoreKind.POSTGRESQL
    assert backend_for("postgresql.db").kind is StoreKind.SQLITE
    assert {backend.kind for backend in BACKENDS} == set(StoreKind)


def test_the_backend_parses_its_own_locations(tmp_path: Path) -> None:
    url = "postgresql://team@db.example/perflab"
    assert store_location(url) == url
    assert store_location(str(tmp_path / "a.db")) == tmp_path / "a.db"
    assert backend_for(tmp_path / "a.db").open(tmp_path / "a.db", True) is not None
