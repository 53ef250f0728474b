"""The PostgreSQL store: one database a team's machines write their runs into at once.

The schema steps (store.migrations) and the reads and writes (store.tables) are the SQLite
store's, written once and run in PostgreSQL's dialect (store.dialect). Each write is committed on
its own (autocommit), as in SQLite, so what was measured survives a crash of the writer;
PostgreSQL's row locks let any number of runs write at once.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from perflab.records.errors import ConfigError, StoreError
from perflab.records.kinds import Metric
from perflab.records.model import Experiment
from perflab.records.redaction import redact
from perflab.records.run_facts import MachineInfo
from perflab.store.dialect import POSTGRESQL
from perflab.store.migrations import SCHEMA_VERSION, migration_steps, statements
from perflab.store.runs import CodeRun, RunSummary, StoredRun
from perflab.store.signature import PERFLAB_APPLICATION_ID, expected_shape
from perflab.store.tables import RunTables, SqlRunWriter

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql", "postgres")
# one lock key for every perflab store: two runs migrating a new database wait for each other
MIGRATION_LOCK_KEY = 0x7065_7266_6C61_62  # "perflab"
# a server that does not answer fails the command with its message instead of hanging
CONNECT_TIMEOUT_S = 10


def is_postgresql(location: object) -> bool:
    """Is this --store a PostgreSQL URL rather than a file?"""
    scheme, _, rest = str(location).partition("://")
    return bool(rest) and scheme.lower() in SCHEMES


def shown(url: str) -> str:
    """The URL without its credentials, for messages (records.redaction)."""
    return redact(url)


def malformed(url: str) -> str | None:
    """Why `url` cannot be a PostgreSQL URL (its secrets hidden), or None when it can: told
    before connecting, so a typo is a message rather than a traceback quoting the URL."""
    try:
        urllib.parse.urlsplit(url)
    except ValueError as error:  # e.g. an unclosed '[' around an IPv6 address
        return str(error)
    try:
        import psycopg.conninfo
    except ImportError:
        return None  # said when connecting: psycopg is needed
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error as error:
        return redact(" ".join(str(error).split()))
    return None


# any query value: a refused URL may hold a secret under a misspelt key (`pasword=`)
_QUERY_VALUE = re.compile(r"(?P<key>[?&][^=&#\s\"']*=)[^&#\s\"']*")


def check_url(url: str) -> None:
    """Raises ConfigError (with the password masked) when `url` is not a valid PostgreSQL URL."""
    reason = malformed(url)
    if reason is not None:

        def masked(text: str) -> str:
            return _QUERY_VALUE.sub(r"\g<key>***", redact(text))

        raise ConfigError(
            f"--store {masked(url)} is not a valid PostgreSQL URL: {masked(reason)}",
            hint="postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (an IPv6 host in [ ])",
        )


class _Connection:
    """psycopg's connection as the shared SQL runs statements on it (store.protocol's
    Connection): each statement committed on its own, failures as StoreError naming the
    database."""

    def __init__(self, connection: psycopg.Connection[Any], url: str) -> None:
        self.raw = connection
        self.url = url

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        import psycopg

        try:
            return self.raw.execute(sql, tuple(parameters))
        except psycopg.Error as error:
            raise _failed(self.url, error) from error

    def close(self) -> None:
        self.raw.close()


def _failed(url: str, error: Exception) -> StoreError:
    detail = redact(" ".join(str(error).split()))
    return StoreError(
        f"the PostgreSQL store {shown(url)} failed: {detail}",
        hint="check that the server runs and the URL's database and user exist "
        "(psql URL connects with the same URL)",
    )


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        import psycopg
    except ImportError as error:
        raise StoreError(
            f"--store {shown(url)} needs psycopg (PostgreSQL's client library), not installed",
            hint="pip install 'perflab[team]' (or pip install 'psycopg[binary]')",
        ) from error
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    # UnicodeError: a host name that cannot be looked up at all (a label over 63 characters)
    except (psycopg.Error, UnicodeError) as error:
        detail = redact(" ".join(str(error).split()))
        raise StoreError(
            f"cannot connect to the PostgreSQL store {shown(url)}: {detail}",
            hint="check the URL (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE) and that "
            "the server accepts connections from this machine",
        ) from error


# ---- the signature: which database is perflab's

# perflab's mark on its schema table; a store made before it had none (see _signature_problem)
SIGNATURE = f"perflab store (application id {PERFLAB_APPLICATION_ID:#010x})"


def _signature_problem(raw: psycopg.Connection[Any]) -> str | None:
    """Why the database's schema (the search path's first) is not perflab's, or None when it
    is: signed, an older perflab's (its tables and columns exactly), or without tables. Only
    reads: table names are not enough (`runs` is a common name)."""
    tables = _columns(raw)
    if "perflab_schema" not in tables:
        if tables:
            return f"it holds tables perflab does not make ({_listed(tables)})"
        return None
    comment = raw.execute(
        "SELECT obj_description(to_regclass('perflab_schema'), 'pg_class')"
    ).fetchone()
    if comment is not None and comment[0] == SIGNATURE:
        return None
    if tables["perflab_schema"] != ("version",):
        return "its perflab_schema table is not perflab's"
    row = raw.execute("SELECT version FROM perflab_schema").fetchone()
    version = int(row[0]) if row else 0
    if not 0 <= version <= SCHEMA_VERSION:
        return f"its perflab_schema says version {version}, and it has no perflab signature"
    expected = {}
    for name, columns in expected_shape(version).items():
        names = [column[0] for column in columns]  # and the rowid the dialect adds
        expected[name] = tuple(sorted(names if "id" in names else [*names, "rowid"]))
    found = {name: columns for name, columns in tables.items() if name != "perflab_schema"}
    if found != expected:
        foreign = sorted(set(found) - set(expected))
        changed = sorted(n for n in set(found) & set(expected) if found[n] != expected[n])
        return (
            f"it holds tables perflab does not make ({_listed(foreign)})"
            if foreign
            else f"its tables {', '.join(changed)} have columns perflab's do not"
            if changed
            else "tables perflab makes are missing"
        )
    return None


def _columns(raw: psycopg.Connection[Any]) -> dict[str, tuple[str, ...]]:
    """Each table of the current schema: its column names, sorted."""
    found: dict[str, list[str]] = {}
    for table, column in raw.execute(
        "SELECT c.relname, a.attname FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
    ):
        found.setdefault(str(table), [])
        if column is not None:
            found[str(table)].append(str(column))
    return {table: tuple(sorted(columns)) for table, columns in found.items()}


def _listed(tables: Iterable[str]) -> str:
    names = sorted(tables)
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _not_perflab(url: str, why: str) -> StoreError:
    return StoreError(
        f"the PostgreSQL database {shown(url)} is not a perflab store: {why}; nothing was "
        "written to it",
        hint="give perflab a database of its own (createdb perflab), or a schema of its own: "
        "?options=-csearch_path%3Dperflab after creating that schema",
    )


class PostgresStore:
    """The store in a PostgreSQL database: a RunStore (store.protocol), see the module's
    docstring."""

    def __init__(self, connection: _Connection, url: str, *, read_only: bool = False) -> None:
        self.connection = connection
        self.url = url
        self.read_only = read_only
        # what messages print as where the store is: the URL, its password hidden
        self.location = shown(url)
        self.tables = RunTables(connection, POSTGRESQL, self.location)

    @classmethod
    def open_url(cls, url: str, *, create: bool = True) -> PostgresStore:
        """Open for writing runs (creating perflab's tables when missing), or with
        create=False for reading: nothing is created, migrated or written."""
        check_url(url)
        raw = _connect(url)
        store = cls(_Connection(raw, url), url, read_only=not create)
        try:
            if create:
                store._migrate()
            else:
                store._check_signature()
                version = store._schema_version()
                if version is None:
                    raise StoreError(
                        f"the PostgreSQL database {shown(url)} holds no perflab store yet",
                        hint=f"`perflab run --store {shown(url)} ...` creates one",
                    )
                store._check_version(version)
        except BaseException:
            raw.close()
            raise
        return store

    def _check_version(self, version: int) -> None:
        if version < 0:
            raise StoreError(
                f"the store {self.location} has schema version {version}, which no perflab "
                "writes: another program made or changed it",
                hint="point --store at a perflab database or a new file",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store {self.location} has schema version {version}, newer than this "
                f"perflab understands ({SCHEMA_VERSION})",
                hint="upgrade perflab, or use another --store",
            )

    def _check_signature(self) -> None:
        """Refuse another application's database (read-only; see _signature_problem)."""
        import psycopg

        try:
            problem = _signature_problem(self.connection.raw)
        except psycopg.Error as error:
            raise _failed(self.url, error) from error
        if problem is not None:
            raise _not_perflab(self.url, problem)

    def _schema_version(self) -> int | None:
        """The number of migration steps applied; None where perflab's tables are missing."""
        row = self.connection.execute("SELECT to_regclass('perflab_schema')").fetchone()
        if row is None or row[0] is None:
            return None
        row = self.connection.execute("SELECT version FROM perflab_schema").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        """The missing steps in one transaction under an advisory lock: many machines may open a
        new database at once, one migrates and the others then find it done. A failed step
        leaves the previous version intact (PostgreSQL's DDL is transactional)."""
        raw = self.connection.raw
        import psycopg

        steps = migration_steps(POSTGRESQL)
        try:
            with raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
                # read before anything is written: another application's database is refused
                problem = _signature_problem(raw)
                if problem is not None:
                    raise _not_perflab(self.url, problem)
                raw.execute("CREATE TABLE IF NOT EXISTS perflab_schema (version INTEGER NOT NULL)")
                row = raw.execute("SELECT version FROM perflab_schema").fetchone()
                if row is None:
                    raw.execute("INSERT INTO perflab_schema VALUES (0)")
                version = int(row[0]) if row else 0
                self._check_version(version)
                for number in range(version, SCHEMA_VERSION):
                    for statement in statements(steps[number]):
                        raw.execute(statement.encode())
                    raw.execute("UPDATE perflab_schema SET version = %s", (number + 1,))
                raw.execute(f"COMMENT ON TABLE perflab_schema IS '{SIGNATURE}'")
        except psycopg.Error as error:
            raise _failed(self.url, error) from error

    def close(self) -> None:
        self.connection.close()

    # ---- writing and reading: the shared SQL (store.tables)

    def begin_run(
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> SqlRunWriter:
        if self.read_only:
            raise StoreError(
                f"the store {self.location} was opened for reading: a run cannot be written to it",
                hint="open it with open_store(url) to write runs",
            )
        run_id = self.tables.insert_run(experiment, machine, perflab_version)
        return SqlRunWriter(self.connection, POSTGRESQL, run_id)

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest)."""
        return self.tables.resolve_run_id(reference)

    def run_ids(self) -> list[int]:
        return self.tables.run_ids()

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        return self.tables.list_runs(limit)

    def runs_of_code(self) -> list[CodeRun]:
        return self.tables.runs_of_code()

    def load_run(
        self, reference: str | int, *, metrics: Collection[Metric] | None = None
    ) -> StoredRun:
        return self.tables.load_run(self.resolve_run_id(reference), metrics)
