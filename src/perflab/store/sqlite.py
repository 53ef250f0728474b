"""The SQLite store: a file opened for writing (created, migrated, checked for damage) or for
reading only (never changed), and watched while a run writes into it. Its reads and writes are
the shared SQL (store.tables) in SQLite's dialect.

Writes are committed one by one as measurements arrive (WAL mode keeps that cheap), so a crash or
Ctrl-C loses nothing already measured.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from collections.abc import Collection, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from perflab.machine.scratch import make_private_folder
from perflab.records.errors import StoreDamagedError, StoreError, StoreLostError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Experiment
from perflab.store.dialect import SQLITE
from perflab.store.migrations import MIGRATIONS, SCHEMA_VERSION, statements

# the records are re-exported: they were defined here when SQLite was the only store
from perflab.store.runs import CodeRun as CodeRun
from perflab.store.runs import RunSummary as RunSummary
from perflab.store.runs import StoredRun as StoredRun
from perflab.store.signature import PERFLAB_APPLICATION_ID, Kind, classify
from perflab.store.tables import (
    FINISH_RUN,
    NO_OWNER_COLUMNS,
    SAMPLE_COLUMNS_2,
    RunTables,
    SqlRunWriter,
    now,
)

DEFAULT_STORE_PATH = Path(".perflab") / "perflab.db"
SQLITE_MAGIC = b"SQLite format 3\x00"
# PRAGMA quick_check reads every page: done on every open up to this size, where it costs a
# fraction of a second; above it only by `perflab doctor --store`
QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024
# how long a connection waits for another process's lock on the store before giving up
LOCK_WAIT_S = 30.0
# below this much free space a run is refused before measuring (its first write would fail)
MIN_FREE_BYTES = 1024 * 1024


def _connect_read_only(path: Path) -> tuple[sqlite3.Connection, int, str | None]:
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


class SqliteStore:
    """The store in an SQLite file (or in memory): a RunStore (store.protocol)."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path | None,
        *,
        read_only: bool = False,
        identity: tuple[int, int] | None = None,
    ) -> None:
        self.connection = connection
        self.path = path
        self.read_only = read_only
        # (device, inode) of the file this connection writes: a run checks it after each write
        self.identity = identity
        # a read-only store with a WAL on a read-only filesystem is read from a copy here
        self._copy_folder: str | None = None
        self.tables = RunTables(connection, SQLITE, str(path), page_errors=(sqlite3.DatabaseError,))

    @classmethod
    def open(cls, path: Path | str = DEFAULT_STORE_PATH, *, create: bool = True) -> SqliteStore:
        """Open the store for writing runs (creating it and its folder when missing), or with
        create=False for reading only: then the file is opened read-only and never created,
        migrated or otherwise changed, so reading works on a read-only filesystem, beside a
        running run, and on a damaged store without making it worse."""
        path = Path(path)
        if not create:
            return cls._open_read_only(path)
        if path.is_dir():
            raise StoreError(
                f"cannot open the store {str(path)!r}: it is a directory",
                hint=f"pass --store {path / 'perflab.db'}",
            )
        _check_regular(path)
        _check_no_linked_journal(path)
        if path.is_file() and path.stat().st_size > 0:
            _check_is_sqlite(path)
            classify(path)  # read-only: another program's file is refused untouched
            reason = read_only_reason(path)
            if reason is not None:
                raise _cannot_write(path, reason)
            # a damaged store is not written into: new pages could overwrite what is readable
            problems = quick_check(path)
            if problems:
                raise StoreDamagedError(
                    f"the store {str(path)!r} is damaged ({problems[0]}): no run is written into "
                    "it, so it does not get worse",
                    hint=f"`perflab doctor --store {path}` says which runs are readable; pass "
                    "--store PATH to write this run elsewhere",
                )
        try:
            created = not path.parent.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            _ignore_for_git(path.parent, created=created)
            connection = sqlite3.connect(path, timeout=LOCK_WAIT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(
                f"cannot open the store {str(path)!r}: {error}",
                hint="pass --store PATH with a writable location",
            ) from error
        store = cls(connection, path, identity=file_identity(path))
        with _store_errors(path):
            store._prepare()
        return store

    @classmethod
    def _open_read_only(cls, path: Path) -> SqliteStore:
        if not path.is_file():
            raise StoreError(
                f"there is no perflab store at {str(path)!r}"
                + (" (it is a directory)" if path.is_dir() else ""),
                hint="`perflab run` creates one; pass --store PATH to read another",
            )
        if path.stat().st_size == 0:
            # an empty file is an empty store: read an empty schema held in memory
            store = cls.in_memory()
            store.path, store.read_only = path, True
            store.tables = replace(store.tables, where=str(path))
            return store
        _check_is_sqlite(path)
        if classify(path) is Kind.EMPTY:
            raise StoreError(
                f"{path} is not a perflab store: an SQLite database without perflab's tables",
                hint="point --store at a perflab database",
            )
        _check_no_linked_journal(path)
        connection, version, copy_folder = _connect_read_only(path)
        store = cls(connection, path, read_only=True)
        store._copy_folder = copy_folder
        store._check_version(version)
        store._read_as_its_schema(path)
        return store

    def _read_as_its_schema(self, path: Path) -> None:
        """Refuses a database without perflab's tables; reads an older schema as it is (a
        read-only store is never migrated)."""
        connection = self.connection
        with _read_errors(path):
            tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
            if "runs" not in tables:
                raise StoreError(
                    f"{path} is not a perflab store: an SQLite database without perflab's tables",
                    hint="point --store at a perflab database",
                )
            columns = {r[1] for r in connection.execute("PRAGMA table_info(runs)")}
            sample_columns = {r[1] for r in connection.execute("PRAGMA table_info(samples)")}
        if "owner_pid" not in columns:
            self.tables = replace(self.tables, owner_columns=NO_OWNER_COLUMNS)
        if "run_queue_ns" not in sample_columns:
            self.tables = replace(self.tables, sample_columns=SAMPLE_COLUMNS_2)

    @classmethod
    def in_memory(cls) -> SqliteStore:
        store = cls(sqlite3.connect(":memory:", isolation_level=None), None)
        store._prepare()
        return store

    def _check_version(self, version: int) -> None:
        if version < 0:
            raise StoreError(
                f"the store {self.path} has schema version {version}, which no perflab writes: "
                "another program made or changed it",
                hint="point --store at a perflab database or a new file",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store {self.path} has schema version {version}, newer than this perflab "
                f"understands ({SCHEMA_VERSION})",
                hint="upgrade perflab, or use another --store",
            )

    def _prepare(self) -> None:
        try:
            version = int(self.connection.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as error:
            raise StoreError(
                f"{self.path} is not a perflab store: {error}",
                hint="point --store at a perflab database or a new file",
            ) from error
        self._check_version(version)
        self._use_wal()
        self.connection.execute("PRAGMA synchronous=NORMAL")
        self.connection.execute("PRAGMA foreign_keys=ON")
        signed = self.connection.execute("PRAGMA application_id").fetchone()[0]
        if version < SCHEMA_VERSION or signed != PERFLAB_APPLICATION_ID:
            self._migrate()

    def _use_wal(self) -> None:
        """Switch a new store to write-ahead logging, waiting for another process doing the same.

        SQLite makes the switch while holding the read lock it took to look at the file; two
        processes opening a new store at once each hold one and want the other's gone, so SQLite
        answers one of them "database is locked" at once instead of waiting (its busy handler is
        not called where waiting could deadlock). Trying again after the other has switched
        finds the file in WAL already: nothing left to take a lock for."""
        deadline = time.monotonic() + LOCK_WAIT_S
        pause_s = 0.005
        while True:
            try:
                self.connection.execute("PRAGMA journal_mode=WAL").fetchall()
                return
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, 0.1)

    def _migrate(self) -> None:
        """The missing steps in one write transaction, the version read again inside it: two
        runs starting at once on a new store both saw version 0 and the second failed with
        "table runs already exists". A failed migration leaves the previous version intact. An older
        perflab's store (see store.signature) gets its signature here."""
        self.connection.execute("BEGIN IMMEDIATE")  # the other waits (connect timeout)
        try:
            version = int(self.connection.execute("PRAGMA user_version").fetchone()[0])
            for number in range(version, SCHEMA_VERSION):
                for statement in statements(MIGRATIONS[number]):
                    self.connection.execute(statement)
                self.connection.execute(f"PRAGMA user_version = {number + 1}")
            # the signature that tells perflab's store from another program's file
            self.connection.execute(f"PRAGMA application_id = {PERFLAB_APPLICATION_ID}")
            self.connection.execute("COMMIT")
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.connection.close()
        if self._copy_folder is not None:
            shutil.rmtree(self._copy_folder, ignore_errors=True)
            self._copy_folder = None

    # ---- writing

    def begin_run(
        self, experiment: Experiment, machine: Mapping[str, Any], perflab_version: str
    ) -> SqlRunWriter:
        with _store_errors(self.path):
            return self._begin_run(experiment, machine, perflab_version)

    def _begin_run(
        self, experiment: Experiment, machine: Mapping[str, Any], perflab_version: str
    ) -> SqlRunWriter:
        if self.read_only:
            raise StoreError(
                f"the store {self.path} was opened for reading: a run cannot be written to it",
                hint="open it with Store.open(path) to write runs",
            )
        run_id = self.tables.insert_run(experiment, machine, perflab_version)
        watch = _FileWatch(self.connection, run_id, self.path, self.identity)
        return SqlRunWriter(
            self.connection, SQLITE, run_id, errors=watch.errors, written=watch.written
        )

    # ---- reading: the shared SQL (store.tables), a damaged page as StoreDamagedError

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest)."""
        with _read_errors(self.path):
            return self.tables.resolve_run_id(reference)

    def run_ids(self) -> list[int]:
        with _read_errors(self.path):
            return self.tables.run_ids()

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """The latest runs; on a damaged store, those that can still be read."""
        with _read_errors(self.path):
            return self.tables.list_runs(limit)

    def runs_of_code(self) -> list[CodeRun]:
        """Every run that measured a git= variant, oldest first, with each such variant's
        provenance (see RunTables.runs_of_code)."""
        with _read_errors(self.path):
            return self.tables.runs_of_code()

    def load_run(
        self, reference: str | int, *, metrics: Collection[Metric] | None = None
    ) -> StoredRun:
        """The run; with `metrics`, only those metrics' samples and artifacts (a large run's
        facts read without its profiles)."""
        run_id = self.resolve_run_id(reference)
        try:
            return self.tables.load_run(run_id, metrics)
        except sqlite3.DatabaseError as error:
            raise StoreDamagedError(
                f"run {run_id} cannot be read: the store {self.path} is damaged ({error})",
                hint=f"`perflab doctor --store {self.path}` says which runs are readable",
            ) from error


def file_identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _check_is_sqlite(path: Path) -> None:
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


def _check_regular(path: Path) -> None:
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


def _check_no_linked_journal(path: Path) -> None:
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
def _read_errors(path: Path | None) -> Iterator[None]:
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


def _cannot_write(path: Path | None, reason: str) -> StoreError:
    return StoreError(
        f"a run cannot be written to the store {str(path)!r}: {reason}",
        hint=f"reading it works (perflab list --store {path}); pass --store PATH on a "
        "writable filesystem to measure",
    )


@contextlib.contextmanager
def _store_errors(path: Path | None) -> Iterator[None]:
    """SQLite failures (read-only file, full disk, locked database) as a StoreError."""
    try:
        yield
    except sqlite3.Error as error:
        reason = read_only_reason(path)
        if reason is not None:
            raise _cannot_write(path, reason) from error
        raise StoreError(
            f"cannot write to the store {str(path)!r}: {error}",
            hint="pass --store PATH with a writable location (and free disk space)",
        ) from error


def _recovery_path(store_path: Path, run_id: int) -> Path | None:
    """A new empty file next to the lost store, else in the working directory, else in /tmp:
    created exclusively, so nothing planted under its name (a link, even a dangling one, or
    one planted after a check) is opened."""
    for folder in (store_path.parent, Path.cwd(), Path(tempfile.gettempdir())):
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            continue
        for attempt in range(1, 100):
            suffix = "" if attempt == 1 else f"-{attempt}"
            candidate = folder / f"perflab-recovered-run{run_id}{suffix}.db"
            try:
                os.close(
                    os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
                )
            except FileExistsError:
                continue
            except OSError:
                break  # not writable after all: the next folder
            return candidate
    return None


class _FileWatch:
    """After each write of a run: is the file at the store's path still the one being written?
    A benchmark that deletes or replaces it (`shutil.rmtree('.perflab')`) would otherwise have
    the run written into a file nobody can open again. Once lost, every later write is refused."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        run_id: int,
        path: Path | None,
        identity: tuple[int, int] | None,
    ) -> None:
        self.connection = connection
        self.run_id = run_id
        self.path = path
        self.identity = identity
        self._lost: StoreLostError | None = None

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """A write: refused once the file was lost; SQLite's failures as StoreError."""
        if self._lost is not None:
            raise self._lost
        with _store_errors(self.path):
            yield

    def written(self) -> None:
        if self.path is None or self.identity is None:
            return
        if file_identity(self.path) == self.identity:
            return
        what = "removed" if not self.path.exists() else "replaced by another file"
        with contextlib.suppress(sqlite3.Error):
            self.connection.execute(
                FINISH_RUN.format(p=SQLITE.placeholder),
                (str(RunStatus.INCOMPLETE), now(), f"the store file was {what}", self.run_id),
            )
        # the connection still holds the old file open: copy it, every run in it, to safety
        recovery = _recovery_path(self.path, self.run_id)
        saved = False
        if recovery is not None:
            try:
                target = sqlite3.connect(recovery)
                try:
                    self.connection.backup(target)
                finally:
                    target.close()
                saved = True
            except sqlite3.Error:
                saved = False
                recovery.unlink(missing_ok=True)  # the empty file made for it
        self._lost = StoreLostError(
            f"the store {str(self.path)!r} was {what} while run {self.run_id} was being written "
            "(did the benchmark delete it?); the run is stopped"
            + (
                f"; run {self.run_id} and every run the file held are saved in {recovery}"
                if saved
                else "; they could not be saved (no writable folder)"
            ),
            hint=f"perflab show {self.run_id} --store {recovery}; keep the store out of the "
            "benchmark's reach (--store PATH)"
            if saved
            else "keep the store out of the benchmark's reach (--store PATH)",
        )
        raise self._lost


def _ignore_for_git(folder: Path, *, created: bool) -> None:
    """A folder perflab made for its store, or the default `.perflab`, gets a `.gitignore` of
    `*` (as pytest's cache does): the store never shows in the user's `git status`. A folder the
    user chose and already had is left as it is."""
    marker = folder / ".gitignore"
    if not (created or folder.name == DEFAULT_STORE_PATH.parent.name) or os.path.lexists(marker):
        return
    try:
        # created exclusively: a link planted under that name (even a dangling one) is not followed
        handle = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        with os.fdopen(handle, "w") as stream:
            stream.write("# created by perflab: its store is not part of the repository\n*\n")
    except OSError:
        pass  # a read-only folder still holds a store opened elsewhere; the ignore file is a nicety


# the name the SQLite store had when it was the only one (Store.open, Store.in_memory)
Store = SqliteStore
