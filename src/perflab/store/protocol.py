"""The store as runs, workflows, publishing and the cluster use it. Each backend (store.sqlite,
store.postgres) implements these protocols on its own; callers type against them, so a new store
is one module that satisfies `RunStore`."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, BenchmarkData, Experiment, Note, Sample
from perflab.records.run_facts import MachineInfo
from perflab.store.runs import CodeRun, RunSummary, StoredRun


@runtime_checkable
class RunSink(Protocol):
    """Where one run's measurements go as they arrive: each call is committed on its own, so
    what was measured survives a crash."""

    @property
    def run_id(self) -> int: ...

    def add_sample(self, sample: Sample) -> None: ...

    def add_artifact(self, artifact: Artifact) -> None: ...

    def add_note(self, note: Note) -> None: ...

    def add_variant_info(self, variant: str, info: Mapping[str, Any]) -> None: ...

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        """The samples this run has stored so far for one benchmark and lens."""
        ...

    def rename_benchmark(self, old: str, new: str) -> None:
        """Everything of `old` in this run filed under `new` (a cell set aside)."""
        ...

    def finish(self, status: RunStatus, error: str | None = None) -> None: ...


@runtime_checkable
class RunRecorder(Protocol):
    """What measuring needs: somewhere to begin a run."""

    def begin_run(
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> RunSink: ...


@runtime_checkable
class RunStore(RunRecorder, Protocol):
    """A store of runs: written as measured, read back whole for analysis."""

    @property
    def read_only(self) -> bool: ...

    def resolve_run_id(self, reference: str | int) -> int:
        """A run id, or `latest`/`last`, or a negative index (-1 is the latest)."""
        ...

    def run_ids(self) -> list[int]: ...

    def list_runs(self, limit: int = 50) -> list[RunSummary]: ...

    def runs_of_code(self) -> list[CodeRun]:
        """Every run that measured a git= variant, oldest first, with its provenance."""
        ...

    def load_run(
        self, reference: str | int, *, metrics: Collection[Metric] | None = None
    ) -> StoredRun: ...

    def close(self) -> None: ...


class Cursor(Protocol):
    """What the shared SQL (store.tables) reads from a statement."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Sequence[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the shared SQL runs statements on: sqlite3's connection, or the PostgreSQL store's."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor: ...
