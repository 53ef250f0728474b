"""The integration tests' shared fixtures: one real PostgreSQL server a session, for the team
store's tests and the store-conformance suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import postgres_server


@pytest.fixture(scope="session")
def postgresql() -> Iterator[str]:
    """One server for the session (its `postgres` database's URL); each test makes its own
    database in it."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (perflab[team])")
    if postgres_server.binaries() is None:
        pytest.skip("PostgreSQL is not installed (scripts/setup.sh --test installs it)")
    with postgres_server.postgresql_server() as url:
        yield url


@pytest.fixture
def database(postgresql: str) -> str:
    """A new, empty database on the session's server: its URL."""
    return postgres_server.new_database(postgresql)
