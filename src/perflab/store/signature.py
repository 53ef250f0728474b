"""Is this SQLite file perflab's? Decided read-only, before anything is written to it.

A perflab store carries a signature of its own: `PRAGMA application_id` set to
PERFLAB_APPLICATION_ID and `PRAGMA user_version` set to its schema version. A store made before
the signature existed is recognised by its shape instead (the tables and columns perflab's
migrations make at its user_version, exactly) and gets the signature when a run opens it. Any
other file with tables is another program's: table names alone say nothing (`runs` is a common
name), so a foreign table of one of perflab's names is refused like any other.
"""

from __future__ import annotations

import enum
import functools
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from perflab.records.errors import StoreError
from perflab.store.migrations import MIGRATIONS

# "pflb": SQLite's header field for the application that owns the file (`file` names it)
PERFLAB_APPLICATION_ID = 0x70666C62
# SQLite's file header is 100 bytes, its application id a big-endian integer at offset 68
# (sqlite.org/fileformat.html)
_HEADER_BYTES = 100
_APPLICATION_ID_OFFSET = 68
_NOT_PERFLAB_HINT = "point --store at a perflab database or a new file"

# a table's shape: its columns' (name, declared type, not null, primary key position)
Shape = dict[str, tuple[tuple[str, str, int, int], ...]]


class Kind(enum.Enum):
    """What a database file at the store's path is to perflab."""

    PERFLAB = "perflab"  # signed by perflab
    UNSIGNED = "unsigned"  # an older perflab's store: perflab's shape, no signature yet
    EMPTY = "empty"  # an SQLite database without tables: perflab may make its own
    UNKNOWN = "unknown"  # cannot be read (damaged, locked): the checks that follow say why


_IMMUTABLE = "&immutable=1"
# a file that read as foreign is read again after each pause while it still changes (3 s in all)
SETTLE_PAUSES_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)

# one read of the file at a path, through its read-only URI: what it is
KindReader = Callable[[Path, str], Kind]


def store_kind(
    path: Path, *, pauses_s: Sequence[float] = SETTLE_PAUSES_S, read: KindReader | None = None
) -> Kind:
    """What the SQLite file at `path` is; raises StoreError ("not a perflab store") for another
    program's database. Never writes: the file is opened read-only (immutable when no WAL
    beside it says a writer is at work, so no -shm or -wal file is made beside it either).
    `read`: one read of the file (None: SQLite's; a test's shows the file changing)."""
    read = read or _kind
    application_id = _header_application_id(path)
    if application_id not in (0, PERFLAB_APPLICATION_ID, None):
        raise _foreign(path, f"its SQLite application id is {application_id:#010x}, not perflab's")
    for pause_s in pauses_s:
        before = _stamp(path)
        try:
            return read(path, _read_only_uri(path))
        except StoreError:
            # an immutable read does not wait for a writer: another perflab making this store
            # (its tables, not yet its version) looks foreign until the file stops changing
            time.sleep(pause_s)
            if _stamp(path) == before:
                raise
    return read(path, _read_only_uri(path))  # still changing after the pauses: what it says now


def _kind(path: Path, uri: str) -> Kind:
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error:
        return Kind.UNKNOWN
    try:
        application_id = int(connection.execute("PRAGMA application_id").fetchone()[0])
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        shape = table_shape(connection)
        objects = schema_objects(connection)
    except sqlite3.Error:
        return Kind.UNKNOWN
    finally:
        connection.close()
    if application_id == PERFLAB_APPLICATION_ID:
        return Kind.PERFLAB
    if application_id != 0:
        raise _foreign(path, f"its SQLite application id is {application_id:#010x}, not perflab's")
    return _unsigned_kind(path, version, shape, objects)


def _unsigned_kind(path: Path, version: int, shape: Shape, objects: frozenset[str]) -> Kind:
    if not shape and not objects and version == 0:
        return Kind.EMPTY
    if version < 0:
        # said as a schema version: another program set it (no perflab writes one below 0)
        raise StoreError(
            f"the store {path} has schema version {version}, which no perflab writes: another "
            "program made or changed it; nothing was written to it",
            hint=_NOT_PERFLAB_HINT,
        )
    if not 0 < version <= len(MIGRATIONS):
        held = f"it holds tables ({_names(shape)})" if shape else "it has no tables"
        raise _foreign(
            path,
            f"{held} but neither perflab's signature nor one of its schema versions "
            f"(user_version {version})",
        )
    expected = expected_shape(version)
    if shape != expected:
        raise _foreign(path, _difference(shape, expected))
    foreign = objects - expected_objects(version)
    if foreign:
        raise _foreign(path, f"it holds what perflab does not make ({_names(foreign)})")
    return Kind.UNSIGNED


def table_shape(connection: sqlite3.Connection) -> Shape:
    """Every table's columns, SQLite's own tables (sqlite_sequence ...) left out."""
    names = [
        str(r[0])
        for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%'"
            " ESCAPE '\\' ORDER BY name"
        )
    ]
    return {
        name: tuple(
            (str(r[1]), str(r[2]).upper(), int(r[3]), int(r[5]))
            for r in connection.execute("SELECT * FROM pragma_table_info(?)", (name,))
        )
        for name in names
    }


def schema_objects(connection: sqlite3.Connection) -> frozenset[str]:
    """Every index, view and trigger ("view NAME" ...), SQLite's own left out."""
    return frozenset(
        f"{r[0]} {r[1]}"
        for r in connection.execute(
            "SELECT type, name FROM sqlite_master WHERE type != 'table'"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
    )


def expected_shape(version: int) -> Shape:
    """The tables perflab's first `version` migration steps make."""
    return _made_by(version)[0]


def expected_objects(version: int) -> frozenset[str]:
    """The indexes (and any view or trigger) perflab's first `version` steps make."""
    return _made_by(version)[1]


@functools.cache
def _made_by(version: int) -> tuple[Shape, frozenset[str]]:
    connection = sqlite3.connect(":memory:")
    try:
        for step in MIGRATIONS[:version]:
            connection.executescript(step)
        return table_shape(connection), schema_objects(connection)
    finally:
        connection.close()


def _difference(shape: Shape, expected: Shape) -> str:
    foreign = sorted(set(shape) - set(expected))
    if foreign:
        return f"it holds tables perflab does not make ({_names(foreign)})"
    missing = sorted(set(expected) - set(shape))
    if missing:
        return f"tables perflab makes are missing ({', '.join(missing)})"
    changed = sorted(name for name in shape if shape[name] != expected[name])
    return (
        f"its table{'s' if len(changed) > 1 else ''} {', '.join(changed)} "
        f"{'have' if len(changed) > 1 else 'has'} columns perflab's do not"
    )


def _names(tables: Iterable[str]) -> str:
    names = sorted(tables)
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(names[:5]) + more


def _foreign(path: Path, why: str) -> StoreError:
    return StoreError(
        f"{path} is not a perflab store: {why}; nothing was written to it",
        hint=_NOT_PERFLAB_HINT,
    )


def _stamp(path: Path) -> tuple[int, int, bool]:
    """What changes while another process writes the file: its size, time and WAL."""
    try:
        status = path.stat()
    except OSError:
        return (-1, -1, False)
    return (status.st_size, status.st_mtime_ns, os.path.exists(f"{path}-wal"))


def _header_application_id(path: Path) -> int | None:
    try:
        with path.open("rb") as file:
            header = file.read(_HEADER_BYTES)
    except OSError:
        return None
    if len(header) < _HEADER_BYTES:
        return None
    field = header[_APPLICATION_ID_OFFSET : _APPLICATION_ID_OFFSET + 4]
    return int.from_bytes(field, "big", signed=True)


def _read_only_uri(path: Path) -> str:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    if not os.path.exists(f"{path}-wal"):
        uri += _IMMUTABLE  # nobody writes it: read without making a -shm beside it
    return uri
