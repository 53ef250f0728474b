"""The store: every sample and artifact, written as it is measured. SQLite by default (a file);
PostgreSQL for a team (a postgresql:// URL). Both implement `RunStore` (store.protocol); callers
type against it. Beside it, analysis_cache keeps what analysis derives from one object file
across perflab runs (a cache: losing it costs time, never a result)."""

from __future__ import annotations

from perflab.store.location import (
    BACKENDS,
    LocationFacts,
    StoreBackend,
    StoreKind,
    StoreLocation,
    backend_for,
    location_facts,
)
from perflab.store.protocol import RunRecorder, RunSink, RunStore
from perflab.store.runs import CodeRun, RunSummary, StoredRun
from perflab.store.sqlite import SqliteStore


def open_store(location: StoreLocation, *, create: bool = True) -> RunStore:
    """The store at `location`: a postgresql:// URL, else an SQLite file (store.location's
    BACKENDS). create=False opens it for reading only (see SqliteStore.open)."""
    return backend_for(location).open(location, create)


def store_location(text: str) -> StoreLocation:
    """--store's value as its backend keeps it: a URL as written (checked), else a file's Path."""
    return backend_for(text).parse(text)


__all__ = [
    "BACKENDS",
    "CodeRun",
    "LocationFacts",
    "RunRecorder",
    "RunSink",
    "RunStore",
    "RunSummary",
    "SqliteStore",
    "StoreBackend",
    "StoreKind",
    "StoreLocation",
    "StoredRun",
    "backend_for",
    "location_facts",
    "open_store",
    "store_location",
]
