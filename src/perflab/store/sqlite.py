"""Reads and writes of the SQLite store.

Writes are committed one by one as measurements arrive (WAL mode keeps that cheap), so a crash or
Ctrl-C loses nothing already measured.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.errors import StoreError
from perflab.model import (
    Artifact,
    BenchmarkData,
    Experiment,
    Metric,
    Note,
    RunStatus,
    Sample,
    Severity,
    merge_info,
)
from perflab.store.codec import experiment_from_json, experiment_to_json
from perflab.store.migrations import MIGRATIONS, SCHEMA_VERSION

DEFAULT_STORE_PATH = Path(".perflab") / "perflab.db"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunSummary:
    run_id: int
    created_at: str
    status: RunStatus
    benchmarks: tuple[str, ...]
    variants: tuple[str, ...]
    metrics: tuple[str, ...]
    n_samples: int
    # per variant, where it came from (git= variants): commit, tree, build command
    provenance: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "created_at": self.created_at,
            "status": str(self.status),
            "benchmarks": list(self.benchmarks),
            "variants": list(self.variants),
            "metrics": list(self.metrics),
            "n_samples": self.n_samples,
            "provenance": {k: dict(v) for k, v in self.provenance.items()},
        }


@dataclass(frozen=True)
class StoredRun:
    run_id: int
    created_at: str
    finished_at: str | None
    status: RunStatus
    perflab_version: str
    experiment: Experiment
    machine: Mapping[str, Any]
    error: str | None
    samples: tuple[Sample, ...]
    artifacts: tuple[Artifact, ...]
    notes: tuple[Note, ...]
    variant_info: Mapping[str, Mapping[str, Any]]

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        return BenchmarkData(
            samples=tuple(
                s for s in self.samples if s.benchmark == benchmark and s.metric == metric
            ),
            artifacts=tuple(
                a for a in self.artifacts if a.benchmark == benchmark and a.metric == metric
            ),
        )


_SAMPLE_COLUMNS = (
    "benchmark, variant, metric, name, value, loops, generation, block, position, cpu, at_ns,"
    " warmup"
)


def _sample(row: tuple[Any, ...]) -> Sample:
    return Sample(
        benchmark=row[0],
        variant=row[1],
        metric=Metric(row[2]),
        name=row[3],
        value=row[4],
        loops=row[5],
        generation=row[6],
        block=row[7],
        position=row[8],
        cpu=row[9],
        at_ns=row[10],
        warmup=bool(row[11]),
    )


class Store:
    def __init__(self, connection: sqlite3.Connection, path: Path | None) -> None:
        self.connection = connection
        self.path = path

    @classmethod
    def open(cls, path: Path | str = DEFAULT_STORE_PATH, *, create: bool = True) -> Store:
        """Open (and with `create`, make) the store. Reading commands pass create=False, so a
        mistyped path is an error rather than a new, empty store."""
        path = Path(path)
        if not create and not path.is_file():
            raise StoreError(
                f"there is no perflab store at {str(path)!r}",
                hint="`perflab run` creates one; pass --store PATH to read another",
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(
                f"cannot open the store {str(path)!r}: {error}",
                hint="pass --store PATH with a writable location",
            ) from error
        store = cls(connection, path)
        store._prepare()
        return store

    @classmethod
    def in_memory(cls) -> Store:
        store = cls(sqlite3.connect(":memory:", isolation_level=None), None)
        store._prepare()
        return store

    def _prepare(self) -> None:
        try:
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.execute("PRAGMA foreign_keys=ON")
            version = int(self.connection.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as error:
            raise StoreError(
                f"{self.path} is not a perflab store: {error}",
                hint="point --store at a perflab database or a new file",
            ) from error
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store {self.path} has schema version {version}, newer than this perflab "
                f"understands ({SCHEMA_VERSION})",
                hint="upgrade perflab, or use another --store",
            )
        for number in range(version, SCHEMA_VERSION):
            # one transaction per step: a failed migration leaves the previous version intact
            self.connection.executescript(
                f"BEGIN; {MIGRATIONS[number]}; PRAGMA user_version = {number + 1}; COMMIT;"
            )

    def close(self) -> None:
        self.connection.close()

    # ---- writing

    def begin_run(
        self, experiment: Experiment, machine: Mapping[str, Any], perflab_version: str
    ) -> RunWriter:
        with _store_errors(self.path):
            return self._begin_run(experiment, machine, perflab_version)

    def _begin_run(
        self, experiment: Experiment, machine: Mapping[str, Any], perflab_version: str
    ) -> RunWriter:
        cursor = self.connection.execute(
            "INSERT INTO runs (created_at, status, perflab_version, experiment_json, machine_json)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                _now(),
                str(RunStatus.RUNNING),
                perflab_version,
                json.dumps(experiment_to_json(experiment)),
                json.dumps(machine),
            ),
        )
        assert cursor.lastrowid is not None
        return RunWriter(self.connection, cursor.lastrowid, self.path)

    # ---- reading

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest)."""
        text = str(reference).strip()
        if text in ("latest", "last"):
            text = "-1"
        try:
            number = int(text)
        except ValueError:
            raise StoreError(
                f"{reference!r} is not a run id", hint="use a number from `perflab list`, or latest"
            ) from None
        if number < 0:
            rows = self.connection.execute(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (-number - 1,)
            ).fetchall()
            if not rows:
                raise StoreError(
                    "there is no such run in the store" if number != -1 else "the store is empty",
                    hint="run `perflab run ...` first, or check --store",
                )
            return int(rows[0][0])
        if self.connection.execute("SELECT 1 FROM runs WHERE id = ?", (number,)).fetchone() is None:
            raise StoreError(
                f"there is no run {number} in {self.path}", hint="`perflab list` shows the runs"
            )
        return number

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        rows = self.connection.execute(
            "SELECT id, created_at, status, experiment_json,"
            " (SELECT COUNT(*) FROM samples WHERE samples.run_id = runs.id)"
            " FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        summaries = []
        for run_id, created_at, status, experiment_json, n_samples in rows:
            experiment = experiment_from_json(json.loads(experiment_json))
            summaries.append(
                RunSummary(
                    run_id=run_id,
                    created_at=created_at,
                    status=RunStatus(status),
                    benchmarks=tuple(b.name for b in experiment.benchmarks),
                    variants=tuple(v.name for v in experiment.variants),
                    metrics=tuple(str(m) for m in experiment.settings.metrics),
                    n_samples=n_samples,
                    provenance=self._provenance(run_id),
                )
            )
        return summaries

    def _provenance(self, run_id: int) -> dict[str, dict[str, Any]]:
        found = {}
        for variant, info_json in self.connection.execute(
            "SELECT variant, info_json FROM variant_info WHERE run_id = ?", (run_id,)
        ):
            provenance = json.loads(info_json).get("provenance")
            if isinstance(provenance, dict) and "commit" in provenance:
                found[variant] = {
                    k: provenance.get(k) for k in ("ref", "commit", "tree", "build", "changes")
                }
        return found

    def load_run(self, reference: str | int) -> StoredRun:
        run_id = self.resolve_run_id(reference)
        row = self.connection.execute(
            "SELECT created_at, finished_at, status, perflab_version, experiment_json,"
            " machine_json, error FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        created_at, finished_at, status, version, experiment_json, machine_json, error = row
        samples = tuple(
            _sample(row)
            for row in self.connection.execute(
                f"SELECT {_SAMPLE_COLUMNS} FROM samples WHERE run_id = ? ORDER BY rowid", (run_id,)
            )
        )
        artifacts = tuple(
            Artifact(
                benchmark=r[0],
                variant=r[1],
                metric=Metric(r[2]),
                kind=r[3],
                generation=r[4],
                content=r[5],
            )
            for r in self.connection.execute(
                "SELECT benchmark, variant, metric, kind, generation, content FROM artifacts"
                " WHERE run_id = ? ORDER BY id",
                (run_id,),
            )
        )
        notes = tuple(
            Note(
                severity=Severity(r[0]),
                message=r[1],
                hint=r[2],
                benchmark=r[3],
                variant=r[4],
                metric=Metric(r[5]) if r[5] else None,
            )
            for r in self.connection.execute(
                "SELECT severity, message, hint, benchmark, variant, metric FROM notes"
                " WHERE run_id = ? ORDER BY rowid",
                (run_id,),
            )
        )
        variant_info = {
            r[0]: json.loads(r[1])
            for r in self.connection.execute(
                "SELECT variant, info_json FROM variant_info WHERE run_id = ?", (run_id,)
            )
        }
        return StoredRun(
            run_id=run_id,
            created_at=created_at,
            finished_at=finished_at,
            status=RunStatus(status),
            perflab_version=version,
            experiment=experiment_from_json(json.loads(experiment_json)),
            machine=json.loads(machine_json),
            error=error,
            samples=samples,
            artifacts=artifacts,
            notes=notes,
            variant_info=variant_info,
        )


@contextlib.contextmanager
def _store_errors(path: Path | None) -> Iterator[None]:
    """SQLite failures (read-only file, full disk, locked database) as a StoreError."""
    try:
        yield
    except sqlite3.Error as error:
        raise StoreError(
            f"cannot write to the store {str(path)!r}: {error}",
            hint="pass --store PATH with a writable location (and free disk space)",
        ) from error


class RunWriter:
    """The sink of one run: each call is its own committed transaction."""

    def __init__(
        self, connection: sqlite3.Connection, run_id: int, path: Path | None = None
    ) -> None:
        self.connection = connection
        self.run_id = run_id
        self.path = path

    def _execute(self, sql: str, parameters: tuple[Any, ...]) -> sqlite3.Cursor:
        with _store_errors(self.path):
            return self.connection.execute(sql, parameters)

    def add_sample(self, sample: Sample) -> None:
        self._execute(
            "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.run_id,
                sample.benchmark,
                sample.variant,
                str(sample.metric),
                sample.name,
                float(sample.value),
                sample.loops,
                sample.generation,
                sample.block,
                sample.position,
                sample.cpu,
                sample.at_ns,
                int(sample.warmup),
            ),
        )

    def add_artifact(self, artifact: Artifact) -> None:
        self._execute(
            "INSERT INTO artifacts (run_id, benchmark, variant, metric, kind, generation, content)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self.run_id,
                artifact.benchmark,
                artifact.variant,
                str(artifact.metric),
                artifact.kind,
                artifact.generation,
                artifact.content,
            ),
        )

    def add_note(self, note: Note) -> None:
        self._execute(
            "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self.run_id,
                str(note.severity),
                note.message,
                note.hint,
                note.benchmark,
                note.variant,
                str(note.metric) if note.metric else None,
            ),
        )

    def add_variant_info(self, variant: str, info: Mapping[str, Any]) -> None:
        row = self._execute(
            "SELECT info_json FROM variant_info WHERE run_id = ? AND variant = ?",
            (self.run_id, variant),
        ).fetchone()
        merged = merge_info(json.loads(row[0]) if row else {}, info)
        self._execute(
            "INSERT OR REPLACE INTO variant_info VALUES (?, ?, ?)",
            (self.run_id, variant, json.dumps(merged)),
        )

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        """What this run has stored so far for one benchmark and lens (samples only: lenses
        that stop adaptively need them; artifacts are read back at analysis)."""
        return BenchmarkData(
            samples=tuple(
                _sample(row)
                for row in self.connection.execute(
                    f"SELECT {_SAMPLE_COLUMNS} FROM samples"
                    " WHERE run_id = ? AND benchmark = ? AND metric = ? ORDER BY rowid",
                    (self.run_id, benchmark, str(metric)),
                )
            )
        )

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        self._execute(
            "UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE id = ?",
            (str(status), _now(), error, self.run_id),
        )
