"""The store as runs, workflows, publishing and the cluster use it. Each backend (store.sqlite,
store.postgres) implements these protocols on its own; callers type against them, so a new store
is one module that satisfies `RunStore`."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, BenchmarkData, Experiment, Note, Sample
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.store.runs import CodeRun, RunSummary, StoredRun


@runtime_checkable
class RunSink(Protocol):
    """Where one run's measurements go as they arrive: each call is committed on its own, so
    what was measured survives a crash."""

    @property
    def run_id(self) -> int:
        """The run's id in its store, given when it began."""
        ...

    def add_sample(self, sample: Sample) -> None:
        """One sample, committed before this returns."""
        ...

    def add_artifact(self, artifact: Artifact) -> None:
        """One artifact (its content as given), committed before this returns."""
        ...

    def add_note(self, note: Note) -> None:
        """One note, committed before this returns; notes read back in the order added."""
        ...

    def add_variant_info(self, variant: str, info: VariantInfo) -> None:
        """Facts of one variant, merged into what it has (records.model.merge_info: a key
        given again replaces its value, a nested object is merged), committed at once."""
        ...

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        """The samples this run has stored so far for one benchmark and lens."""
        ...

    def rename_benchmark(self, old: str, new: str) -> None:
        """Everything of `old` in this run filed under `new` (a cell set aside)."""
        ...

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        """The run's end: its status, the time it finished, and the error that ended it."""
        ...


@runtime_checkable
class RunRecorder(Protocol):
    """What measuring needs: somewhere to begin a run."""

    def begin_run(
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> RunSink:
        """A new run, stored at once as running (its status until `finish`), and the sink its
        measurements go to. A store opened read-only raises StoreError."""
        ...


@runtime_checkable
class RunStore(RunRecorder, Protocol):
    """A store of runs: written as measured, read back whole for analysis."""

    @property
    def read_only(self) -> bool:
        """Opened for reading only (open_store's create=False): nothing is created, migrated
        or written, and begin_run refuses."""
        ...

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest); StoreError
        when no run has it."""
        ...

    def run_ids(self) -> list[int]:
        """Every run's id, oldest first."""
        ...

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """The newest `limit` runs, newest first, with their sample counts."""
        ...

    def runs_of_code(self) -> list[CodeRun]:
        """Every run that measured a git= variant, oldest first, with its provenance."""
        ...

    def load_run(
        self, reference: str | int, *, metrics: Collection[Metric] | None = None
    ) -> StoredRun:
        """The run `reference` names (as resolve_run_id reads it), whole or with only the
        samples and artifacts of `metrics`; StoreError when there is no such run (a damaged
        SQLite file: StoreDamagedError, which says how to find the readable runs)."""
        ...

    def close(self) -> None:
        """Release the connection; the store is not used after."""
        ...


class Cursor(Protocol):
    """What the shared SQL (store.tables) reads from a statement."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Sequence[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the shared SQL runs statements on: sqlite3's connection, or the PostgreSQL store's."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...
