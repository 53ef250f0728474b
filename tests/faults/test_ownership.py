"""perflab changes only what is perflab's: another program's SQLite file or PostgreSQL database,
even one whose tables have perflab's names, is refused before anything is written to it, and
an older perflab's store (no signature yet) still opens and gets the signature."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.store.migrations import SCHEMA_VERSION
from perflab.store.signature import PERFLAB_APPLICATION_ID
from tests.support import postgres_server
from tests.support.cli_commands import FAST, perflab

pytestmark = pytest.mark.integration


def _run(cwd: Path, store: str) -> subprocess.CompletedProcess[str]:
    return perflab("run", "--cmd", "true", "-q", *FAST, "--store", store, cwd=cwd)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _flat(text: str) -> str:
    return "".join(text.split())


def _database(path: Path, *statements: str, wal: bool = False) -> None:
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()


FOREIGN = {
    "runs-of-its-own": ("CREATE TABLE runs (id INTEGER PRIMARY KEY, secret TEXT)",),
    "every-name-one-column-off": (
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, created_at TEXT)",
        "CREATE TABLE samples (run_id INTEGER)",
        "PRAGMA user_version = 1",
    ),
    "another-application-id": ("PRAGMA application_id = 1234",),
    "wal-mode-runs": ("CREATE TABLE runs (id INTEGER PRIMARY KEY, secret TEXT)",),
    "a-view-named-runs": ("CREATE VIEW runs AS SELECT 1 AS id",),
}


@pytest.mark.parametrize("case", sorted(FOREIGN))
def test_another_programs_sqlite_file_with_perflabs_table_names_is_refused_untouched(
    tmp_path: Path, case: str
) -> None:
    """--store on another program's SQLite file whose tables (or views) have perflab's names:
    run, list and show say "not a perflab store" (status 2, no traceback); the file is byte
    for byte unchanged and no -wal, -shm or journal appears beside it"""
    other = tmp_path / "d.db"
    _database(other, *FOREIGN[case], wal=case.startswith("wal"))
    before = _digest(other)
    for done in (
        _run(tmp_path, str(other)),
        perflab("list", "--store", str(other), cwd=tmp_path),
        perflab("show", "1", "--store", str(other), cwd=tmp_path),
    ):
        assert done.returncode == 2, done.stderr
        assert _flat("is not a perflab store") in _flat(done.stderr), done.stderr
        assert "Traceback" not in done.stderr
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.db"]


def test_an_older_perflabs_store_without_the_signature_opens_and_gets_it(tmp_path: Path) -> None:
    """a store an older perflab made (perflab's tables, no application id): read as it is
    (unchanged), and the next run writes into it and signs it"""
    store = tmp_path / "old.db"
    assert _run(tmp_path, str(store)).returncode == 0
    _database(store, "PRAGMA application_id = 0")
    before = _digest(store)
    listed = perflab("list", "--store", str(store), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert _digest(store) == before
    done = _run(tmp_path, str(store))
    assert done.returncode == 0, done.stderr
    connection = sqlite3.connect(store)
    try:
        assert connection.execute("PRAGMA application_id").fetchone()[0] == PERFLAB_APPLICATION_ID
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    finally:
        connection.close()


def test_an_empty_sqlite_database_becomes_a_perflab_store(tmp_path: Path) -> None:
    """an SQLite database without tables (or an empty file) is made a perflab store"""
    database, empty = tmp_path / "new.db", tmp_path / "empty.db"
    _database(database, "PRAGMA user_version = 0")
    empty.touch()
    for store in (database, empty):
        done = _run(tmp_path, str(store))
        assert done.returncode == 0, done.stderr
        connection = sqlite3.connect(store)
        try:
            signed = connection.execute("PRAGMA application_id").fetchone()[0]
        finally:
            connection.close()
        assert signed == PERFLAB_APPLICATION_ID


# ---- PostgreSQL: a real server (tests/support/postgres_server.py), a database per test

_databases = itertools.count()


@pytest.fixture(scope="module")
def postgresql() -> Iterator[str]:
    pytest.importorskip("psycopg", reason="psycopg is not installed (perflab[team])")
    if postgres_server.binaries() is None:
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh --test installs it)")
    with postgres_server.postgresql_server() as url:
        yield url


def _database_url(server: str, *statements: str) -> str:
    import psycopg

    url = postgres_server.new_database(server, f"ownership_{next(_databases)}")
    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement.encode())
    return url


def _snapshot(url: str) -> list[object]:
    """Every table, column, comment and row of the database's public schema."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        shape = connection.execute(
            "SELECT table_name, column_name, data_type, obj_description("
            " (quote_ident(table_name))::regclass, 'pg_class')"
            " FROM information_schema.columns WHERE table_schema = 'public'"
            " ORDER BY table_name, column_name"
        ).fetchall()
        tables = sorted({row[0] for row in shape})
        rows = [connection.execute(f'SELECT * FROM "{t}" ORDER BY 1'.encode()).fetchall()
                for t in tables]  # fmt: skip
    return [shape, rows]


FOREIGN_POSTGRESQL = {
    "runs-of-its-own": (
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, secret TEXT)",
        "INSERT INTO runs VALUES (1, 'theirs')",
    ),
    "a-perflab_schema-of-its-own": (
        "CREATE TABLE perflab_schema (version INTEGER NOT NULL)",
        "INSERT INTO perflab_schema VALUES (1)",
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, secret TEXT)",
    ),
}


@pytest.mark.parametrize("case", sorted(FOREIGN_POSTGRESQL))
def test_another_applications_postgresql_database_is_refused_untouched(
    postgresql: str, tmp_path: Path, case: str
) -> None:
    """--store on another application's PostgreSQL database with a `runs` table (or even a
    perflab_schema table) of its own: run and list say "not a perflab store" (status 2, no
    traceback); its tables, columns, comments and rows are unchanged"""
    url = _database_url(postgresql, *FOREIGN_POSTGRESQL[case])
    before = _snapshot(url)
    for done in (_run(tmp_path, url), perflab("list", "--store", url, cwd=tmp_path)):
        assert done.returncode == 2, done.stderr
        assert _flat("is not a perflab store") in _flat(done.stderr), done.stderr
        assert "Traceback" not in done.stderr
    assert _snapshot(url) == before


def test_an_older_perflabs_postgresql_store_opens_and_gets_the_signature(
    postgresql: str, tmp_path: Path
) -> None:
    """a PostgreSQL store an older perflab made (its tables, no signature): listed as it is,
    and the next run writes into it and signs it"""
    import psycopg

    from perflab.store.postgres import SIGNATURE

    url = _database_url(postgresql)
    assert _run(tmp_path, url).returncode == 0
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("COMMENT ON TABLE perflab_schema IS NULL")
    before = _snapshot(url)
    listed = perflab("list", "--store", url, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert _snapshot(url) == before
    done = _run(tmp_path, url)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url, autocommit=True) as connection:
        comment = connection.execute(
            "SELECT obj_description('perflab_schema'::regclass, 'pg_class')"
        ).fetchone()
        runs = connection.execute("SELECT COUNT(*) FROM runs").fetchone()
    assert comment == (SIGNATURE,) and runs == (2,)
