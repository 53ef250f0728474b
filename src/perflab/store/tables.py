"""The store's reads and writes, written once in SQL both backends run: the parameter marks,
the id of a new row and the upsert come from the store's dialect (store.dialect). Failures pass
through as the connection raises them; each backend turns its own into a StoreError."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.records.errors import StoreError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import (
    Artifact,
    BenchmarkData,
    Experiment,
    Note,
    Sample,
    Severity,
    merge_info,
)
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.store.codec import experiment_from_json, experiment_to_json
from perflab.store.dialect import Dialect
from perflab.store.owner import ProcessIdentity
from perflab.store.protocol import Connection, Cursor
from perflab.store.runs import CodeRun, RunSummary, StoredRun

OWNER_COLUMNS = "owner_pid, owner_start_ticks, owner_boot_id, owner_host"
SAMPLE_COLUMNS = (
    "benchmark, variant, metric, name, value, loops, generation, block, position, cpu, at_ns,"
    " warmup, run_queue_ns, cpu_ns, involuntary_switches"
)
# an older schema (before 3), read as it is: no scheduler accounting
SAMPLE_COLUMNS_BEFORE_V3 = SAMPLE_COLUMNS.replace(
    "run_queue_ns, cpu_ns, involuntary_switches", "NULL, NULL, NULL"
)
# an older schema (before 2), read as it is: no owner, so a running run stays running
NO_OWNER_COLUMNS = "NULL, NULL, NULL, NULL"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunTables:
    """The runs of one database, read and begun through `connection` in `dialect`'s SQL.
    `where` names the store in messages; the columns are those its schema has."""

    connection: Connection
    dialect: Dialect
    where: str
    owner_columns: str = OWNER_COLUMNS
    sample_columns: str = SAMPLE_COLUMNS
    # failures of a damaged page: a listing skips what they hide (none where pages cannot be)
    page_errors: tuple[type[Exception], ...] = ()

    def _marks(self, count: int) -> str:
        return self.dialect.marks(count)

    # ---- writing

    def insert_run(self, experiment: Experiment, machine: MachineInfo, perflab_version: str) -> int:
        """A new run being measured now by this process; its id."""
        owner = ProcessIdentity.current()
        values = (
            now(),
            str(RunStatus.RUNNING),
            perflab_version,
            json.dumps(experiment_to_json(experiment)),
            json.dumps(machine.to_json()),
            owner.pid,
            owner.start_ticks,
            owner.boot_id,
            owner.host,
        )
        insert = (
            "INSERT INTO runs (created_at, status, perflab_version, experiment_json, machine_json,"
            f" {OWNER_COLUMNS}) VALUES ({self._marks(len(values))})"
        )
        if self.dialect.last_id_query is None:
            row = self.connection.execute(insert + " RETURNING id", values).fetchone()
        else:
            self.connection.execute(insert, values)
            row = self.connection.execute(self.dialect.last_id_query).fetchone()
        return int(row[0])

    # ---- reading

    def resolve_run_id(self, reference: str | int) -> int:
        text = str(reference).strip()
        if text in ("latest", "last"):
            text = "-1"
        try:
            number = int(text)
        except ValueError:
            raise StoreError(
                f"{reference!r} is not a run id", hint="use a number from `perflab list`, or latest"
            ) from None
        p = self.dialect.placeholder
        if abs(number) >= 2**63:  # beyond 64-bit integers: no run has it
            raise StoreError(
                f"there is no run {number} in {self.where}", hint="`perflab list` shows the runs"
            )
        if number < 0:
            rows = self.connection.execute(
                f"SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET {p}", (-number - 1,)
            ).fetchall()
            if not rows:
                raise StoreError(
                    "there is no such run in the store" if number != -1 else "the store is empty",
                    hint="run `perflab run ...` first, or check --store",
                )
            return int(rows[0][0])
        found = self.connection.execute(f"SELECT 1 FROM runs WHERE id = {p}", (number,))
        if found.fetchone() is None:
            raise StoreError(
                f"there is no run {number} in {self.where}", hint="`perflab list` shows the runs"
            )
        return number

    def run_ids(self) -> list[int]:
        return [int(r[0]) for r in self.connection.execute("SELECT id FROM runs ORDER BY id")]

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """The latest runs; on a damaged store, those that can still be read."""
        p = self.dialect.placeholder
        query = (
            f"SELECT id, created_at, status, experiment_json, {self.owner_columns},"
            " (SELECT COUNT(*) FROM samples WHERE samples.run_id = runs.id)"
            f" FROM runs {{where}} ORDER BY id DESC LIMIT {p}"
        )
        try:
            rows = self.connection.execute(query.format(where=""), (limit,)).fetchall()
        except self.page_errors:
            rows = []
            for run_id in reversed(self.run_ids()):
                with contextlib.suppress(*self.page_errors):
                    rows += self.connection.execute(
                        query.format(where=f"WHERE id = {p}"), (run_id, 1)
                    ).fetchall()
                if len(rows) >= limit:
                    break
        summaries = []
        for run_id, created_at, status, experiment_json, *owner, n_samples in rows:
            experiment = experiment_from_json(json.loads(experiment_json))
            summaries.append(
                RunSummary(
                    run_id=run_id,
                    created_at=created_at,
                    status=_status(status, owner),
                    benchmarks=tuple(b.name for b in experiment.benchmarks),
                    variants=tuple(v.name for v in experiment.variants),
                    metrics=tuple(str(m) for m in experiment.settings.metrics),
                    n_samples=n_samples,
                    provenance=self._provenance(run_id),
                )
            )
        return summaries

    def runs_of_code(self) -> list[CodeRun]:
        """Every run that measured a git= variant, oldest first, with each such variant's
        provenance: what a workflow reads to find the runs that hold a commit's code (one
        scan, so a history of many commits asks once)."""
        provenance: dict[int, dict[str, dict[str, Any]]] = {}
        for run_id, variant, info_json in self.connection.execute(
            "SELECT run_id, variant, info_json FROM variant_info"
            f" WHERE info_json LIKE {self.dialect.placeholder} ORDER BY run_id",
            ("%provenance%",),
        ):
            found = json.loads(info_json).get("provenance")
            if isinstance(found, dict) and "commit" in found:
                provenance.setdefault(int(run_id), {})[variant] = found
        runs = []
        for run_id, found in provenance.items():
            row = self.connection.execute(
                f"SELECT status, experiment_json, created_at, finished_at,"
                f" {self.owner_columns} FROM runs WHERE id = {self.dialect.placeholder}",
                (run_id,),
            ).fetchone()
            if row is not None:
                experiment = experiment_from_json(json.loads(row[1]))
                status = _status(row[0], row[4:])
                runs.append(CodeRun(run_id, status, experiment, found, row[2], row[3]))
        return runs

    def _provenance(self, run_id: int) -> dict[str, dict[str, Any]]:
        try:
            return self._read_provenance(run_id)
        except self.page_errors:  # a damaged page: the run is listed without it
            return {}

    def _read_provenance(self, run_id: int) -> dict[str, dict[str, Any]]:
        found = {}
        for variant, info_json in self.connection.execute(
            "SELECT variant, info_json FROM variant_info"
            f" WHERE run_id = {self.dialect.placeholder}",
            (run_id,),
        ):
            provenance = json.loads(info_json).get("provenance")
            if isinstance(provenance, dict) and "commit" in provenance:
                found[variant] = {
                    k: provenance.get(k) for k in ("ref", "commit", "tree", "build", "changes")
                }
        return found

    def load_run(self, run_id: int, metrics: Collection[Metric] | None = None) -> StoredRun:
        """Run `run_id` (an id resolve_run_id gave); with `metrics`, only those metrics'
        samples and artifacts."""
        p = self.dialect.placeholder
        row = self.connection.execute(
            "SELECT created_at, finished_at, status, perflab_version, experiment_json,"
            f" machine_json, error, {self.owner_columns} FROM runs WHERE id = {p}",
            (run_id,),
        ).fetchone()
        created_at, finished_at, status, version, experiment_json, machine_json, error = row[:7]
        samples, artifacts = self._measured(run_id, metrics)
        notes = tuple(
            _note(r)
            for r in self.connection.execute(
                "SELECT severity, message, hint, benchmark, variant, metric FROM notes"
                f" WHERE run_id = {p} ORDER BY rowid",
                (run_id,),
            )
        )
        variant_info = {
            r[0]: json.loads(r[1])
            for r in self.connection.execute(
                f"SELECT variant, info_json FROM variant_info WHERE run_id = {p}", (run_id,)
            )
        }
        return StoredRun(
            run_id=run_id,
            created_at=created_at,
            finished_at=finished_at,
            status=_status(status, row[7:]),
            perflab_version=version,
            experiment=experiment_from_json(json.loads(experiment_json)),
            machine=MachineInfo.from_json(json.loads(machine_json)),
            error=error,
            samples=samples,
            artifacts=artifacts,
            notes=notes,
            variant_info=variant_info,
        )

    def _measured(
        self, run_id: int, metrics: Collection[Metric] | None
    ) -> tuple[tuple[Sample, ...], tuple[Artifact, ...]]:
        """The run's samples and artifacts, of `metrics` only where given."""
        only, chosen = self._metric_filter(metrics)
        p = self.dialect.placeholder
        samples = tuple(
            sample_of(row)
            for row in self.connection.execute(
                f"SELECT {self.sample_columns} FROM samples WHERE run_id = {p}{only}"
                " ORDER BY rowid",
                (run_id, *chosen),
            )
        )
        artifacts = tuple(
            _artifact(r)
            for r in self.connection.execute(
                "SELECT benchmark, variant, metric, kind, generation, content FROM artifacts"
                f" WHERE run_id = {p}{only} ORDER BY id",
                (run_id, *chosen),
            )
        )
        return samples, artifacts

    def _metric_filter(self, metrics: Collection[Metric] | None) -> tuple[str, tuple[str, ...]]:
        """The SQL condition (after `run_id = ?`) and its parameters for rows of `metrics`
        (None: every row)."""
        if metrics is None:
            return "", ()
        if not metrics:
            return " AND 1 = 0", ()
        return f" AND metric IN ({self._marks(len(metrics))})", tuple(str(m) for m in metrics)


class SqlRunWriter:
    """The sink of one run (a RunSink): each call is its own committed transaction. `errors`
    wraps each statement (the backend's failures as StoreError); `written` is called after
    each write (the SQLite store checks its file is still there)."""

    def __init__(
        self,
        connection: Connection,
        dialect: Dialect,
        run_id: int,
        *,
        errors: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
        written: Callable[[], None] = lambda: None,
    ) -> None:
        self.connection = connection
        self.dialect = dialect
        self._run_id = run_id
        self._errors = errors
        self._written = written

    @property
    def run_id(self) -> int:
        return self._run_id

    def _execute(self, sql: str, parameters: Sequence[Any]) -> Cursor:
        with self._errors():
            cursor = self.connection.execute(sql, parameters)
        self._written()
        return cursor

    def add_sample(self, sample: Sample) -> None:
        self._execute(
            f"INSERT INTO samples (run_id, {SAMPLE_COLUMNS}) VALUES ({self.dialect.marks(16)})",
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
                sample.run_queue_ns,
                sample.cpu_ns,
                sample.involuntary_switches,
            ),
        )

    def add_artifact(self, artifact: Artifact) -> None:
        self._execute(
            "INSERT INTO artifacts (run_id, benchmark, variant, metric, kind, generation, content)"
            f" VALUES ({self.dialect.marks(7)})",
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
            "INSERT INTO notes (run_id, severity, message, hint, benchmark, variant, metric)"
            f" VALUES ({self.dialect.marks(7)})",
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

    def add_variant_info(self, variant: str, info: VariantInfo) -> None:
        p = self.dialect.placeholder
        row = self._execute(
            f"SELECT info_json FROM variant_info WHERE run_id = {p} AND variant = {p}",
            (self.run_id, variant),
        ).fetchone()
        merged = merge_info(json.loads(row[0]) if row else {}, info.to_json())
        self._execute(self.dialect.upsert_variant_info, (self.run_id, variant, json.dumps(merged)))

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        """What this run has stored so far for one benchmark and lens (samples only: lenses
        that stop adaptively need them; artifacts are read back at analysis)."""
        p = self.dialect.placeholder
        return BenchmarkData(
            samples=tuple(
                sample_of(row)
                for row in self.connection.execute(
                    f"SELECT {SAMPLE_COLUMNS} FROM samples"
                    f" WHERE run_id = {p} AND benchmark = {p} AND metric = {p} ORDER BY rowid",
                    (self.run_id, benchmark, str(metric)),
                )
            )
        )

    def rename_benchmark(self, old: str, new: str) -> None:
        p = self.dialect.placeholder
        for table in ("samples", "artifacts", "notes"):
            self._execute(
                f"UPDATE {table} SET benchmark = {p} WHERE run_id = {p} AND benchmark = {p}",
                (new, self.run_id, old),
            )

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        self._execute(
            FINISH_RUN.format(p=self.dialect.placeholder), (str(status), now(), error, self.run_id)
        )


# how a run ends: its status, when, and the error that ended it
FINISH_RUN = "UPDATE runs SET status = {p}, finished_at = {p}, error = {p} WHERE id = {p}"


def sample_of(row: Sequence[Any]) -> Sample:
    """A sample read back from its row of the samples table."""
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
        run_queue_ns=row[12],
        cpu_ns=row[13],
        involuntary_switches=row[14],
    )


def _artifact(row: Sequence[Any]) -> Artifact:
    benchmark, variant, metric, kind, generation, content = row
    return Artifact(
        benchmark=benchmark,
        variant=variant,
        metric=Metric(metric),
        kind=kind,
        generation=generation,
        content=content,
    )


def _note(row: Sequence[Any]) -> Note:
    severity, message, hint, benchmark, variant, metric = row
    return Note(
        severity=Severity(severity),
        message=message,
        hint=hint,
        benchmark=benchmark,
        variant=variant,
        metric=Metric(metric) if metric else None,
    )


def _status(stored: str, owner: Sequence[Any]) -> RunStatus:
    """A run stored as running whose owning process is gone was interrupted (killed, or its
    disk filled so it could not record how it ended)."""
    status = RunStatus(stored)
    if status is not RunStatus.RUNNING or owner[0] is None:
        return status
    identity = ProcessIdentity(int(owner[0]), owner[1], owner[2], str(owner[3]))
    return RunStatus.INTERRUPTED if identity.is_alive() is False else status
