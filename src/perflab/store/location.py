"""What a --store location names, asked of the store package alone: the engine, the API and the
CLI read these facts instead of asking which backend a location is (a new backend answers here)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path


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


def location_facts(location: Path | str) -> LocationFacts:
    """The facts of the store at `location` (a postgresql:// URL, else an SQLite file)."""
    from perflab.store.postgres import is_postgresql, shown  # as open_store: read when asked

    if is_postgresql(location):
        return LocationFacts(
            kind=StoreKind.POSTGRESQL,
            shown=shown(str(location)),
            is_file=False,
            exists=True,
            create_to_read=True,
        )
    return LocationFacts(
        kind=StoreKind.SQLITE,
        shown=str(location),
        is_file=True,
        exists=Path(location).is_file(),
        create_to_read=False,
    )
