"""The SQLite file under the store: checks before opening, read-only reading, and SQLite's failures
as perflab's errors. Before it is opened it must be an SQLite file, a regular one, with no linked
journal, not damaged, and writable; on a read-only filesystem it is read from a copy when its WAL
holds writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from perflab.machine.scratch import make_private_folder
from perflab.records.errors import StoreDamagedError, StoreError

SQLITE_MAGIC = b"SQLite format 3\x00"
# PRAGMA quick_check reads every page: done on every open up to this size, where it costs a
# fraction of a second; above it only by `perflab doctor --store`
QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024
# how long a connection waits for another process's lock on the store before giving up
LOCK_WAIT_S = 30.0
# below this much free space a run is refused before measuring (its first write would fail)
MIN_FREE_BYTES = 1024 * 1024


def connect_read_only(path: Path) -> tuple[sqlite3.Connection, int, str | None]:
    """A read-only connection to the store at `path`, its schema version, and the folder of
    the copy it reads when it had to read one (else None)."""
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_S, isolation_level=None)
        return connection, int(connection.execute("PRAGMA user_version").fetchone()[0]), None
    except sqlite3.OperationalError as error:
        if not _cannot_open(error):
            raise StoreError(f"cannot read the store {path}: {error}") from error
        # on a read-only filesystem SQLite cannot create the WAL's shared-memory file;
        # nobody can be writing there: the file is read as immutable, or, when its WAL
        # holds writes, a copy of both is (immutable would miss the runs in the WAL)
        copy_folder = _copy_with_wal(path)
        if copy_folder is None:
            connection = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
        else:
            connection = sqlite3.connect(Path(copy_folder) / path.name, isolation_level=None)
        try:
            return connection, _read_version(connection, path), copy_folder
        except BaseException:
            if copy_folder is not None:
                shutil.rmtree(copy_folder, ignore_errors=True)
            raise
    except sqlite3.DatabaseError as error:
        raise _damaged(path, error) from error


def device_inode(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def check_is_sqlite(path: Path) -> None:
    """Raises StoreError when the file at `path` cannot be read or is not an SQLite database."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise StoreError(
            f"cannot read the store {str(path)!r}: {error}", hint="check the path's permissions"
        ) from error
    if head != SQLITE_MAGIC:
        raise StoreError(
            f"{path} is not a perflab store: the file is not an SQLite database",
            hint="point --store at a perflab database or a new file",
        )


def check_regular(path: Path) -> None:
    """A store is a regular file (or a link to one), or a path where one can be made: never a
    device, a pipe or a socket, which SQLite would write into and make journals beside."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise StoreError(
                f"the store {str(path)!r} is a symbolic link to {os.readlink(path)!r}, which "
                "does not exist: perflab does not create files through a link",
                hint="pass --store with the target's own path, or a new file",
            ) from None
        return
    except OSError as error:
        raise StoreError(f"cannot open the store {str(path)!r}: {error}") from error
    if not stat.S_ISREG(found.st_mode):
        kind = (
            "a device"
            if stat.S_ISCHR(found.st_mode) or stat.S_ISBLK(found.st_mode)
            else "a pipe"
            if stat.S_ISFIFO(found.st_mode)
            else "a socket"
            if stat.S_ISSOCK(found.st_mode)
            else "not a regular file"
        )
        through = f" (through the link to {os.path.realpath(path)})" if path.is_symlink() else ""
        raise StoreError(
            f"the store {str(path)!r} is {kind}{through}, not a file: nothing is written to it",
            hint="pass --store PATH with a regular file or a new one",
        )


def check_no_linked_journal(path: Path) -> None:
    """No symbolic link where SQLite keeps the store's journal, WAL or shared memory: SQLite
    would open it and write through it (a link planted beside a store in a shared folder)."""
    for folder in dict.fromkeys((path, Path(os.path.realpath(path)))):
        for suffix in ("-journal", "-wal", "-shm"):
            beside = Path(f"{folder}{suffix}")
            if beside.is_symlink():
                raise StoreError(
                    f"the store {str(path)!r} has a symbolic link {str(beside)!r} beside it (to "
                    f"{os.readlink(beside)!r}) where SQLite keeps its {suffix[1:]} file: "
                    "perflab does not write through a link it did not make",
                    hint=f"remove {beside} if it is yours, or pass --store PATH in a folder of "
                    "your own",
                )


def _copy_with_wal(path: Path) -> str | None:
    """A temporary folder holding a copy of the store and its WAL, when the WAL holds
    writes (a read-only filesystem: SQLite cannot read a WAL there without its shared-memory
    file, and reading the file alone would miss those writes); None when there is no WAL."""
    wal = Path(f"{path}-wal")
    try:
        if wal.stat().st_size == 0:
            return None
    except OSError:
        return None
    # named for the sweep: a reader killed while it reads leaves no copy of the store behind
    folder = str(make_private_folder("store-copy"))
    try:
        shutil.copyfile(path, Path(folder) / path.name)
        shutil.copyfile(wal, Path(folder) / wal.name)
    except OSError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise StoreError(
            f"cannot read the store {path}: it is on a read-only filesystem with writes in its "
            f"WAL ({wal.stat().st_size:,} bytes) that SQLite can only read from a copy, and "
            f"copying it failed ({error}); the runs written last would be missing",
            hint="free space in the temporary directory (TMPDIR), or copy the store and its "
            "-wal file to a writable place and pass --store COPY",
        ) from error
    return folder


def _cannot_open(error: sqlite3.OperationalError) -> bool:
    """SQLite cannot make the WAL's shared-memory file beside the store: a read-only
    filesystem ("unable to open"), or a full one ("disk I/O error" growing it)."""
    return "unable to open" in str(error) or "disk I/O error" in str(error)


def _read_version(connection: sqlite3.Connection, path: Path) -> int:
    try:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as error:
        raise _damaged(path, error) from error


def _damaged(path: Path, error: sqlite3.Error) -> StoreDamagedError:
    return StoreDamagedError(
        f"the store {path} is damaged: {error} (a truncated or overwritten file)",
        hint=f"`perflab doctor --store {path}` says which runs are readable; keep a copy of the "
        "file before trying to repair it",
    )


def quick_check(path: Path, *, thorough: bool = False) -> tuple[str, ...]:
    """What SQLite's page checks find wrong in the file (empty: nothing); read-only.

    Without `thorough`, PRAGMA quick_check on files up to QUICK_CHECK_MAX_BYTES; with it,
    PRAGMA integrity_check (also indexes against tables) whatever the size."""
    if not thorough and path.stat().st_size > QUICK_CHECK_MAX_BYTES:
        return ()
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        try:
            connection = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_S)
            connection.execute("PRAGMA user_version").fetchone()
        except sqlite3.OperationalError as error:
            if not _cannot_open(error):
                raise
            connection = sqlite3.connect(uri + "&immutable=1", uri=True)
        try:
            pragma = "integrity_check" if thorough else "quick_check"
            rows = connection.execute(f"PRAGMA {pragma}(20)").fetchall()
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        return (str(error),)
    return tuple(
        " ".join(str(r[0]).replace("*** in database main ***", "").split())
        for r in rows
        if r[0] != "ok"
    )


@contextlib.contextmanager
def read_errors(path: Path | None) -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as error:
        raise _damaged(path or Path(":memory:"), error) from error


def read_only_reason(path: Path | None) -> str | None:
    """Why the store's file cannot be written, when that is the reason a write failed."""
    if path is None:
        return None
    folder = path.parent if str(path.parent) else Path(".")
    with contextlib.suppress(OSError):
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it is on a read-only filesystem"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    if not os.access(folder, os.W_OK):
        return f"its folder {folder} is not writable"
    with contextlib.suppress(OSError):
        space = os.statvfs(folder)
        free = (space.f_bfree if os.geteuid() == 0 else space.f_bavail) * space.f_frsize
        if free < MIN_FREE_BYTES:
            return f"its filesystem is full ({free:,} bytes free)"
    return None


def cannot_write(path: Path | None, reason: str) -> StoreError:
    return StoreError(
        f"a run cannot be written to the store {str(path)!r}: {reason}",
        hint=f"reading it works (perflab list --store {path}); pass --store PATH on a "
        "writable filesystem to measure",
    )


@contextlib.contextmanager
def store_errors(path: Path | None) -> Iterator[None]:
    """SQLite failures (read-only file, full disk, locked database) as a StoreError."""
    try:
        yield
    except sqlite3.Error as error:
        reason = read_only_reason(path)
        if reason is not None:
            raise cannot_write(path, reason) from error
        raise StoreError(
            f"cannot write to the store {str(path)!r}: {error}",
            hint="pass --store PATH with a writable location (and free disk space)",
        ) from error
