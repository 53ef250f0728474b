"""The store: every sample and artifact, written as it is measured. SQLite by default (a file);
PostgreSQL for a team (a postgresql:// URL). Both implement `RunStore` (store.protocol); callers
type against it. Beside it, analysis_cache keeps what analysis derives from one object file
across perflab runs (a cache: losing it costs time, never a result)."""

from __future__ import annotations

from pathlib import Path

from perflab.store.location import LocationFacts, StoreKind, location_facts
from perflab.store.protocol import RunRecorder, RunSink, RunStore
from perflab.store.runs import CodeRun, RunSummary, StoredRun
from perflab.store.sqlite import SqliteStore

StoreLocation = Path | str


def open_store(location: StoreLocation, *, create: bool = True) -> RunStore:
    """The store at `location`: a postgresql:// URL, else an SQLite file. create=False opens it
    for reading only (see SqliteStore.open)."""
    from perflab.store.postgres import is_postgresql

    if is_postgresql(location):
        from perflab.store.postgres import PostgresStore  # psycopg is loaded only here

        return PostgresStore.open_url(str(location), create=create)
    return SqliteStore.open(Path(location), create=create)


def store_location(text: str) -> StoreLocation:
    """--store's value: a URL is kept as written (a Path would fold its '//')."""
    from perflab.store.postgres import check_url, is_postgresql

    if not is_postgresql(text):
        return Path(text)
    check_url(text)  # a ConfigError: argparse passes it on to main's handler
    return text


__all__ = [
    "CodeRun",
    "LocationFacts",
    "RunRecorder",
    "RunSink",
    "RunStore",
    "RunSummary",
    "SqliteStore",
    "StoreKind",
    "StoreLocation",
    "StoredRun",
    "location_facts",
    "open_store",
    "store_location",
]
