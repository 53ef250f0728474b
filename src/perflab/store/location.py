"""The store backends, picked once: each says which --store locations are its own, what they are
and how one is opened. The engine, the API and the CLI read a location's facts instead of asking
which backend it is; open_store, store_location and location_facts read BACKENDS alone, so a new
backend is one more entry there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perflab.store.protocol import RunStore

StoreLocation = Path | str


class StoreKind(Enum):
    """The backend a location names; its value is the name messages use."""

    SQLITE = "SQLite"
    POSTGRESQL = "PostgreSQL"


@dataclass(frozen=True, kw_only=True)
class LocationFacts:
    """What callers outside store/ may know of a location."""

    kind: StoreKind
    shown: str  # for messages: a URL without its credentials
    # an SQLite file: `doctor --store` checks its pages; a server checks its own (pg_amcheck)
    is_file: bool
    # runs can be read there: a file made already; a server always (it makes its schema)
    exists: bool
    # open_store's `create` for reading ahead of a run's writes: a server's schema is made as the
    # run would make it; a file is read only, never made by a read
    create_to_read: bool


@dataclass(frozen=True, kw_only=True)
class StoreBackend:
    """One kind of store. Its functions import its module when called, so a driver (psycopg) is
    loaded only for a location of its own."""

    kind: StoreKind
    claims: Callable[[str], bool]  # is this --store text one of its locations?
    parse: Callable[[str], StoreLocation]  # --store's text as a location; ConfigError if malformed
    facts: Callable[[StoreLocation], LocationFacts]
    open: Callable[[StoreLocation, bool], RunStore]  # (location, create): see open_store


def _claims_postgresql(text: str) -> bool:
    from perflab.store.postgres import is_postgresql

    return is_postgresql(text)


def _parse_postgresql(text: str) -> StoreLocation:
    from perflab.store.postgres import check_url

    check_url(text)  # a ConfigError: argparse passes it on to main's handler
    return text  # kept as written: a Path would fold its '//'


def _postgresql_facts(location: StoreLocation) -> LocationFacts:
    from perflab.store.postgres import shown

    return LocationFacts(
        kind=StoreKind.POSTGRESQL,
        shown=shown(str(location)),
        is_file=False,
        exists=True,
        create_to_read=True,
    )


def _open_postgresql(location: StoreLocation, create: bool) -> RunStore:
    from perflab.store.postgres import PostgresStore

    return PostgresStore.open_url(str(location), create=create)


def _sqlite_facts(location: StoreLocation) -> LocationFacts:
    return LocationFacts(
        kind=StoreKind.SQLITE,
        shown=str(location),
        is_file=True,
        exists=Path(location).is_file(),
        create_to_read=False,
    )


def _open_sqlite(location: StoreLocation, create: bool) -> RunStore:
    from perflab.store.sqlite import SqliteStore

    return SqliteStore.open(Path(location), create=create)


# asked in order; the last claims every location (an SQLite file is the default)
BACKENDS: tuple[StoreBackend, ...] = (
    StoreBackend(
        kind=StoreKind.POSTGRESQL,
        claims=_claims_postgresql,
        parse=_parse_postgresql,
        facts=_postgresql_facts,
        open=_open_postgresql,
    ),
    StoreBackend(
        kind=StoreKind.SQLITE,
        claims=lambda text: True,
        parse=Path,
        facts=_sqlite_facts,
        open=_open_sqlite,
    ),
)


def backend_for(location: StoreLocation) -> StoreBackend:
    """The backend whose location this is: the first in BACKENDS that claims it."""
    text = str(location)
    return next(backend for backend in BACKENDS if backend.claims(text))


def location_facts(location: StoreLocation) -> LocationFacts:
    """The facts of the store at `location` (a postgresql:// URL, else an SQLite file)."""
    return backend_for(location).facts(location)
