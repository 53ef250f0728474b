"""Schema versions of the store, oldest first. The database's PRAGMA user_version says which
have been applied; its PRAGMA application_id (signature.PERFLAB_APPLICATION_ID) says the file
is perflab's. Never edit a released step: append a new one. Steps are split on ';' and run in
one transaction: plain DDL, no ';' inside string literals.

History:
  1  runs, samples, artifacts, notes, variant_info
  2  runs.owner_pid, owner_start_ticks, owner_boot_id, owner_host: the process writing a run, so
     a run whose process is gone reads as `interrupted` rather than `running` forever
  3  samples.run_queue_ns, cpu_ns, involuntary_switches: the measuring process's scheduler
     accounting per sample, to recognise samples another process interrupted
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        perflab_version TEXT NOT NULL,
        experiment_json TEXT NOT NULL,
        machine_json TEXT NOT NULL,
        error TEXT
    );
    CREATE TABLE samples (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        benchmark TEXT NOT NULL,
        variant TEXT NOT NULL,
        metric TEXT NOT NULL,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        loops INTEGER NOT NULL,
        generation INTEGER NOT NULL,
        block INTEGER NOT NULL,
        position INTEGER NOT NULL,
        cpu INTEGER,
        at_ns INTEGER NOT NULL,
        warmup INTEGER NOT NULL
    );
    CREATE INDEX samples_by_run ON samples(run_id, benchmark, metric);
    CREATE TABLE artifacts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        benchmark TEXT NOT NULL,
        variant TEXT NOT NULL,
        metric TEXT NOT NULL,
        kind TEXT NOT NULL,
        generation INTEGER NOT NULL,
        content TEXT NOT NULL
    );
    CREATE INDEX artifacts_by_run ON artifacts(run_id, benchmark, metric);
    CREATE TABLE notes (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        severity TEXT NOT NULL,
        message TEXT NOT NULL,
        hint TEXT,
        benchmark TEXT,
        variant TEXT,
        metric TEXT
    );
    CREATE TABLE variant_info (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        variant TEXT NOT NULL,
        info_json TEXT NOT NULL,
        PRIMARY KEY (run_id, variant)
    );
    """,
    """
    ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
    ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;
    ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
    ALTER TABLE runs ADD COLUMN owner_host TEXT;
    """,
    """
    ALTER TABLE samples ADD COLUMN run_queue_ns INTEGER;
    ALTER TABLE samples ADD COLUMN cpu_ns INTEGER;
    ALTER TABLE samples ADD COLUMN involuntary_switches INTEGER;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
