"""The store: every sample and artifact, written as it is measured. SQLite by default (a file);
PostgreSQL for a team (a postgresql:// URL)."""

from __future__ import annotations

from pathlib import Path

from perflab.store.sqlite import RunSummary, RunWriter, Store, StoredRun, _ignore_for_git

StoreLocation = Path | str


def open_store(location: StoreLocation, *, create: bool = True) -> Store:
    """The store at `location`: a postgresql:// URL, else an SQLite file. create=False opens it
    for reading only (see Store.open)."""
    from perflab.store.postgres import is_postgresql

    if is_postgresql(location):
        from perflab.store.postgres import PostgresStore  # psycopg is loaded only here

        return PostgresStore.open_url(str(location), create=create)
    return Store.open(Path(location), create=create)


def store_location(text: str) -> StoreLocation:
    """--store's value: a URL is kept as written (a Path would fold its '//')."""
    from perflab.store.postgres import is_postgresql

    return text if is_postgresql(text) else Path(text)


def make_store_folder(folder: Path) -> Path:
    """A folder for perflab's files kept outside a store (a PostgreSQL store's history index
    in `.perflab`), made as an SQLite store's is: with its `.gitignore`."""
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    _ignore_for_git(folder, created=created)
    return folder


__all__ = [
    "RunSummary",
    "RunWriter",
    "Store",
    "StoreLocation",
    "StoredRun",
    "make_store_folder",
    "open_store",
    "store_location",
]
