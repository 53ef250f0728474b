"""The SQLite store: a file opened for writing (created, migrated, checked for damage) or for
reading only (never changed), and watched while a run writes into it. Its reads and writes are
the shared SQL (store.tables) in SQLite's dialect.

Writes are committed one by one as measurements arrive (WAL mode keeps that cheap), so a crash or
Ctrl-C loses nothing already measured.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from perflab.records.errors import StoreDamagedError, StoreError
from perflab.records.kinds import Metric
from perflab.records.model import Experiment
from perflab.records.run_facts import MachineInfo
from perflab.store.dialect import SQLITE
from perflab.store.migrations import MIGRATIONS, SCHEMA_VERSION, statements

# the records are re-exported: they were defined here when SQLite was the only store
from perflab.store.runs import CodeRun as CodeRun
from perflab.store.runs import RunSummary as RunSummary
from perflab.store.runs import StoredRun as StoredRun
from perflab.store.signature import PERFLAB_APPLICATION_ID, Kind, store_kind
from perflab.store.sqlite_file import (
    LOCK_WAIT_S,
    cannot_write,
    check_is_sqlite,
    check_no_linked_journal,
    check_regular,
    connect_read_only,
    device_inode,
    quick_check,
    read_errors,
    read_only_reason,
    store_errors,
)
from perflab.store.sqlite_watch import FileWatch
from perflab.store.tables import (
    NO_OWNER_COLUMNS,
    SAMPLE_COLUMNS_BEFORE_V3,
    RunTables,
    SqlRunWriter,
)

DEFAULT_STORE_PATH = Path(".perflab") / "perflab.db"


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
        check_regular(path)
        check_no_linked_journal(path)
        if path.is_file() and path.stat().st_size > 0:
            check_is_sqlite(path)
            store_kind(path)  # read-only: another program's file is refused untouched
            reason = read_only_reason(path)
            if reason is not None:
                raise cannot_write(path, reason)
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
        store = cls(connection, path, identity=device_inode(path))
        with store_errors(path):
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
        check_is_sqlite(path)
        if store_kind(path) is Kind.EMPTY:
            raise StoreError(
                f"{path} is not a perflab store: an SQLite database without perflab's tables",
                hint="point --store at a perflab database",
            )
        check_no_linked_journal(path)
        connection, version, copy_folder = connect_read_only(path)
        store = cls(connection, path, read_only=True)
        store._copy_folder = copy_folder
        store._check_version(version)
        store._read_as_its_schema(path)
        return store

    def _read_as_its_schema(self, path: Path) -> None:
        """Refuses a database without perflab's tables; reads an older schema as it is (a
        read-only store is never migrated)."""
        connection = self.connection
        with read_errors(path):
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
            self.tables = replace(self.tables, sample_columns=SAMPLE_COLUMNS_BEFORE_V3)

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
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> SqlRunWriter:
        with store_errors(self.path):
            return self._begin_run(experiment, machine, perflab_version)

    def _begin_run(
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> SqlRunWriter:
        if self.read_only:
            raise StoreError(
                f"the store {self.path} was opened for reading: a run cannot be written to it",
                hint="open it with SqliteStore.open(path) to write runs",
            )
        run_id = self.tables.insert_run(experiment, machine, perflab_version)
        watch = FileWatch(self.connection, run_id, self.path, self.identity)
        return SqlRunWriter(
            self.connection, SQLITE, run_id, errors=watch.errors, written=watch.written
        )

    # ---- reading: the shared SQL (store.tables), a damaged page as StoreDamagedError

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest)."""
        with read_errors(self.path):
            return self.tables.resolve_run_id(reference)

    def run_ids(self) -> list[int]:
        with read_errors(self.path):
            return self.tables.run_ids()

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """The latest runs; on a damaged store, those that can still be read."""
        with read_errors(self.path):
            return self.tables.list_runs(limit)

    def runs_of_code(self) -> list[CodeRun]:
        """Every run that measured a git= variant, oldest first, with each such variant's
        provenance (see RunTables.runs_of_code)."""
        with read_errors(self.path):
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
