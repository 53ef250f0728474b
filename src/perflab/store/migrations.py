"""Schema versions of the store, oldest first. The database's PRAGMA user_version says which
have been applied; its PRAGMA application_id (signature.PERFLAB_APPLICATION_ID) says the file
is perflab's. Never edit a released step: append a new one. Steps are split on ';' and run in
one transaction: plain DDL, no ';' inside string literals. Each step is written once for both
stores: `{id}`, `{integer}`, `{real}` and `{rowid}` are the words of the store's dialect
(store.dialect), and SQLite's are the words the step was released with.

History:
  1  runs, samples, artifacts, notes, variant_info
  2  runs.owner_pid, owner_start_ticks, owner_boot_id, owner_host: the process writing a run, so
     a run whose process is gone reads as `interrupted` rather than `running` forever
  3  samples.run_queue_ns, cpu_ns, involuntary_switches: the measuring process's scheduler
     accounting per sample, to recognise samples another process interrupted
"""

from __future__ import annotations

from perflab.store.dialect import SQLITE, Dialect

_STEPS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id {id},
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        perflab_version TEXT NOT NULL,
        experiment_json TEXT NOT NULL,
        machine_json TEXT NOT NULL,
        error TEXT
    );
    CREATE TABLE samples (
        run_id {integer} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        benchmark TEXT NOT NULL,
        variant TEXT NOT NULL,
        metric TEXT NOT NULL,
        name TEXT NOT NULL,
        value {real} NOT NULL,
        loops {integer} NOT NULL,
        generation {integer} NOT NULL,
        block {integer} NOT NULL,
        position {integer} NOT NULL,
        cpu {integer},
        at_ns {integer} NOT NULL,
        warmup {integer} NOT NULL{rowid}
    );
    CREATE INDEX samples_by_run ON samples(run_id, benchmark, metric);
    CREATE TABLE artifacts (
        id {id},
        run_id {integer} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        benchmark TEXT NOT NULL,
        variant TEXT NOT NULL,
        metric TEXT NOT NULL,
        kind TEXT NOT NULL,
        generation {integer} NOT NULL,
        content TEXT NOT NULL
    );
    CREATE INDEX artifacts_by_run ON artifacts(run_id, benchmark, metric);
    CREATE TABLE notes (
        run_id {integer} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        severity TEXT NOT NULL,
        message TEXT NOT NULL,
        hint TEXT,
        benchmark TEXT,
        variant TEXT,
        metric TEXT{rowid}
    );
    CREATE TABLE variant_info (
        run_id {integer} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        variant TEXT NOT NULL,
        info_json TEXT NOT NULL,
        PRIMARY KEY (run_id, variant){rowid}
    );
    """,
    """
    ALTER TABLE runs ADD COLUMN owner_pid {integer};
    ALTER TABLE runs ADD COLUMN owner_start_ticks {integer};
    ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
    ALTER TABLE runs ADD COLUMN owner_host TEXT;
    """,
    """
    ALTER TABLE samples ADD COLUMN run_queue_ns {integer};
    ALTER TABLE samples ADD COLUMN cpu_ns {integer};
    ALTER TABLE samples ADD COLUMN involuntary_switches {integer};
    """,
)


def migration_steps(dialect: Dialect) -> tuple[str, ...]:
    """Every step in `dialect`'s words."""
    words = {
        "id": dialect.id_column,
        "integer": dialect.integer,
        "real": dialect.real,
        "rowid": dialect.rowid_column,
    }
    return tuple(step.format(**words) for step in _STEPS)


def statements(step: str) -> list[str]:
    """One step's statements."""
    return [s.strip() for s in step.split(";") if s.strip()]


# the steps as the SQLite store runs them (and store.signature recognises an older store by)
MIGRATIONS: tuple[str, ...] = migration_steps(SQLITE)

SCHEMA_VERSION = len(_STEPS)
