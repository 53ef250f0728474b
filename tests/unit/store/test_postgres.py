"""Where a store is opened: a postgresql:// URL is kept as written and a path is a path, and a
URL is shown without its password (store/postgres.py; no server here,
tests/integration/test_postgres_store.py has one)."""

from __future__ import annotations

from pathlib import Path

from perflab.store import store_location
from perflab.store.postgres import is_postgresql, shown


def test_a_url_is_kept_as_written_and_a_path_is_a_path() -> None:
    url = "postgresql://ci@db.example:5433/perflab?sslmode=require"
    assert store_location(url) == url and is_postgresql(url)
    assert is_postgresql("postgres://x@y/z") and not is_postgresql("postgresql.db")
    assert store_location("runs/perflab.db") == Path("runs/perflab.db")


def test_the_password_is_never_shown() -> None:
    assert shown("postgresql://ci:hunter2@db:5432/p") == "postgresql://ci:***@db:5432/p"
    assert shown("postgresql://ci@db/p") == "postgresql://ci@db/p"
