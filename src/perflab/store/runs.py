"""What a store gives back: a run whole (StoredRun), a line of the list (RunSummary), a run of
git= code with where each variant came from (CodeRun). Both stores return the same records."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, BenchmarkData, Experiment, Note, Sample
from perflab.records.run_facts import MachineInfo


@dataclass(frozen=True)
class RunSummary:
    """One stored run in brief (`perflab runs`): when, its status, what it measured and how many
    samples."""

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
class CodeRun:
    """A stored run that measured git= variants: its experiment and where each such variant's
    code came from (`provenance`: commit, tree, build, changes), by variant name."""

    run_id: int
    status: RunStatus
    experiment: Experiment
    provenance: Mapping[str, Mapping[str, Any]]
    # when it began and ended (None: not yet): a finished run's samples do not change after
    created_at: str = ""
    finished_at: str | None = None


@dataclass(frozen=True)
class StoredRun:
    """Everything stored of one run, read back for analysis: the experiment, the machine, and every
    sample, artifact and note."""

    run_id: int
    created_at: str
    finished_at: str | None
    status: RunStatus
    perflab_version: str
    experiment: Experiment
    machine: MachineInfo
    error: str | None
    samples: tuple[Sample, ...]
    artifacts: tuple[Artifact, ...]
    notes: tuple[Note, ...]
    variant_info: Mapping[str, Mapping[str, Any]]
    # where it was read from when not a store: a JSON document's file name (store.json_runs)
    source: str | None = None

    def of_benchmarks(self, names: Collection[str]) -> StoredRun:
        """The run with only these benchmarks' samples, artifacts and notes (and the run's own
        notes); its experiment whole, so each is analysed as in the whole run."""
        wanted = set(names)
        return replace(
            self,
            samples=tuple(s for s in self.samples if s.benchmark in wanted),
            artifacts=tuple(a for a in self.artifacts if a.benchmark in wanted),
            notes=tuple(n for n in self.notes if n.benchmark is None or n.benchmark in wanted),
        )

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        return self._data.get((benchmark, metric), BenchmarkData())

    @cached_property
    def _data(self) -> dict[tuple[str, str], BenchmarkData]:
        """Each benchmark and metric's samples and artifacts, in stored order, grouped once: a
        run is analysed a benchmark at a time, and a scan per benchmark is quadratic in a
        history's run of hundreds of them."""
        samples: dict[tuple[str, str], list[Sample]] = {}
        for sample in self.samples:
            samples.setdefault((sample.benchmark, sample.metric), []).append(sample)
        artifacts: dict[tuple[str, str], list[Artifact]] = {}
        for artifact in self.artifacts:
            artifacts.setdefault((artifact.benchmark, artifact.metric), []).append(artifact)
        return {
            key: BenchmarkData(tuple(samples.get(key, ())), tuple(artifacts.get(key, ())))
            for key in samples.keys() | artifacts.keys()
        }
