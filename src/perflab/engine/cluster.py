"""Cells on a Ray cluster (`--ray`): each benchmark measured on one node. Each benchmark of an
experiment is a *cell*, all its variants interleaved on one node by the ordinary engine, so every
comparison, step of a stack and interaction of a matrix is made between samples of one machine.
Cells are independent: each becomes one Ray task in a placement group of one STRICT_PACK bundle (the
measuring CPU and the orchestrating one, and memory), and Ray places the bundles on whichever nodes
have them free.

The task streams what its engine writes (samples, artifacts, notes, variant facts, the node's
machine facts) back to the driver in batches as it measures; the driver writes them into its one
store, under one run, at once. A cell whose node dies is kept, renamed `NAME (abandoned ...)`
(analysis never reads it), and measured again from scratch on another node; a cell that fails
for its own reasons is recorded and not retried. Ctrl-C cancels the tasks, whose engines stop
every process they started.

This module is the driver's side; the task's is `cluster_node.py`, the connection to Ray
`cluster_ray.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from perflab.analyse.places import CELL_KIND, cell_place, places_note
from perflab.engine.cluster_node import (
    CANCEL_GRACE_S,
    CellFinished,
    MachineFacts,
    NodeFacts,
    ProgressLine,
    Record,
    VariantFacts,
)
from perflab.engine.cluster_ray import (
    CELL_CPUS,
    CELL_MEMORY_BYTES,
    RayApi,
    cluster_machine,
    connect,
    ray_session_folder,
)
from perflab.engine.prepare.git_prepare import (
    WORKING_TREE_PATCH,
    measures_working_tree,
    uncommitted_note,
)
from perflab.engine.services import RunServices
from perflab.git.bundle import CommitBundle, bundle_commits, named_provenance
from perflab.git.cache_entry import default_cache_dir
from perflab.measure.lens import ProgressReporter
from perflab.records.errors import BenchmarkFailedError, PerflabError, RunInterrupted, StoreError
from perflab.records.kinds import ArtifactScope, Metric, RunStatus
from perflab.records.model import Artifact, Experiment, Note, Sample, Severity, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import VariantInfo
from perflab.records.version import __version__
from perflab.store import RunSink, RunStore
from perflab.store.codec import experiment_to_json

if TYPE_CHECKING:  # Ray is imported only when a cluster runs
    from ray import ObjectRef

# a node that dies mid-cell: the cell is measured again, at most this many times in all
MAX_ATTEMPTS = 3
ABANDONED = "abandoned"


@dataclass(frozen=True)
class ClusterCell:
    """One benchmark's share of the experiment, measured as one job on the cluster."""

    benchmark: str
    experiment: Experiment  # the whole experiment with only this benchmark


def cells_of(experiment: Experiment) -> tuple[ClusterCell, ...]:
    """One cell per benchmark: all pairs and interactions are within a benchmark."""
    return tuple(
        ClusterCell(b.name, replace(experiment, benchmarks=(b,))) for b in experiment.benchmarks
    )


def abandoned_name(benchmark: str, attempt: int, node: str) -> str:
    return f"{benchmark} ({ABANDONED}: attempt {attempt} on node {node[:12]})"


class CellTask(Protocol):
    """A cell's Ray task as the driver reads it (Ray's streaming ObjectRefGenerator): each item
    is the object ref of one batch of the cell's records, read with ray.get."""

    def __iter__(self) -> Iterator[object]: ...

    def __next__(self) -> object: ...


@dataclass
class _Attempt:
    cell: ClusterCell
    number: int
    placement_group: object  # Ray's handle, given back to remove_placement_group
    node: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    wrote: bool = False  # anything of this attempt is in the store
    done: bool = False  # its last batch arrived: the cell is measured whatever happens next


def run_on_cluster(
    experiment: Experiment,
    *,
    store: RunStore,
    services: RunServices | None = None,
) -> RunResult:
    """Measure the experiment's cells on a Ray cluster (`experiment.settings.ray_address`, or a
    local one started here and stopped at the end); one run in `store`, written as cells measure.
    Of `services` the progress and the build cache are used: the nodes start their own
    processes and spend their own budgets."""
    from perflab.analyse.run import analyse_run

    api = RayApi()
    services = services or RunServices()
    address = experiment.settings.ray_address
    started_here = not api.ray.is_initialized()
    # a local cluster keeps its session in a private folder of perflab's, removed at the end
    # (Ray's default is a shared, world-writable $TMPDIR/ray that it never cleans)
    local = started_here and not address and not os.environ.get("RAY_ADDRESS")
    session = ray_session_folder() if local else None
    try:
        if started_here:
            connect(api, address, None if session is None else str(session))
        machine = cluster_machine(api, address)
        writer = store.begin_run(experiment, machine, __version__)
        driver = _Driver(api, experiment, writer, services.progress, services.cache_dir)
        failures = _drive(driver, writer)
    finally:
        if started_here:
            api.ray.shutdown()
        if session is not None:
            shutil.rmtree(session, ignore_errors=True)
    status = RunStatus.INCOMPLETE if failures else RunStatus.COMPLETE
    writer.finish(status, error="; ".join(str(f) for f in failures) or None)
    result = analyse_run(store.load_run(writer.run_id))
    return replace(result, failures=tuple(failures))


def _drive(driver: _Driver, writer: RunSink) -> list[PerflabError]:
    """The cells measured; a run stopped by an error or Ctrl-C is marked incomplete."""
    try:
        return driver.run()
    except BaseException as error:
        driver.cancel()
        with contextlib.suppress(StoreError):
            writer.finish(
                RunStatus.INCOMPLETE,
                error="interrupted" if isinstance(error, KeyboardInterrupt) else str(error),
            )
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, RunInterrupted):
            raise RunInterrupted(writer.run_id) from error
        raise
    finally:
        driver.remove_placement_groups()


class _Driver:
    def __init__(
        self,
        api: RayApi,
        experiment: Experiment,
        writer: RunSink,
        progress: ProgressReporter,
        cache_dir: str | Path | None,
    ) -> None:
        self.api = api
        self.experiment = experiment
        self.writer = writer
        self.progress = progress
        self.cache_dir = None if cache_dir is None else str(cache_dir)
        self.pending: dict[CellTask, _Attempt] = {}  # generator -> its attempt
        self.groups: list[object] = []
        self.bundle: CommitBundle | None = None  # the git= variants' commits
        self.commits: CommitBundle | None = None  # the bundle without its data
        self.bundle_data: list[ObjectRef[bytes]] = []  # the data, in Ray's object store
        self.places: dict[str, dict[str, Any]] = {}  # benchmark -> its measured cell's facts

    def start(self, cell: ClusterCell, number: int) -> None:
        group = self.api.placement_group(
            [{"CPU": CELL_CPUS, "memory": CELL_MEMORY_BYTES}], strategy="STRICT_PACK"
        )
        self.groups.append(group)
        generator = self.api.task.options(
            scheduling_strategy=self.api.strategy(
                placement_group=group,
                placement_group_bundle_index=0,
                placement_group_capture_child_tasks=True,
            ),
            num_cpus=CELL_CPUS,
            memory=CELL_MEMORY_BYTES,
            max_retries=0,  # retried here: a half-measured cell must be set aside first
            num_returns="streaming",
        ).remote(
            experiment_to_json(cell.experiment),
            os.getcwd(),
            self.cache_dir,
            self.commits,
            self.bundle_data,
        )
        self.pending[generator] = _Attempt(cell, number, group)

    def run(self) -> list[PerflabError]:
        failures: list[PerflabError] = []
        self.bundle = bundle_commits(
            self.experiment,
            cache_dir=self.cache_dir if self.cache_dir is not None else default_cache_dir(),
        )
        if self.bundle is not None:  # the data once per run, fetched by the nodes lacking it
            self.commits = replace(self.bundle, data=b"")
            self.bundle_data = [self.api.ray.put(self.bundle.data)]
        for note in uncommitted_notes(self.experiment, self.bundle):
            self.writer.add_note(note)
        for cell in cells_of(self.experiment):
            self.start(cell, 1)
        while self.pending:
            ready, _ = self.api.ray.wait(list(self.pending), num_returns=1, timeout=1.0)
            for generator in ready:
                attempt = self.pending[generator]
                try:
                    batch = self.api.ray.get(next(generator))
                except StopIteration:
                    self.finished(generator)
                    continue
                except self.api.exceptions.RayTaskError as error:
                    # the cell's own failure (a bug, a budget that cannot fit): not retried
                    failures.append(self.failed(generator, error))
                    continue
                except self.api.exceptions.RayError as error:
                    if attempt.done:  # lost after its last batch: nothing is missing
                        self.finished(generator)
                        continue
                    failure = self.node_lost(generator, error)
                    if failure is not None:
                        failures.append(failure)
                    continue
                failures += self.write(attempt, batch)
        self._places_note()
        return failures

    def _places_note(self) -> None:
        """Said once the cells are measured, where they were measured on more than one node."""
        message = places_note([cell_place(facts) for facts in self.places.values()], "cells")
        if message is not None:
            self.writer.add_note(
                Note(
                    severity=Severity.INFO,
                    message=f"{message}: each comparison is within one cell, on one node; "
                    "absolute values of cells on different nodes are not comparable",
                )
            )

    def write(self, attempt: _Attempt, batch: list[Record]) -> list[PerflabError]:
        """A batch of the attempt's records written into the run; the cell's failures, once
        its last record came."""
        failures: list[PerflabError] = []
        for record in batch:
            failures += self._write_one(attempt, record)
        return failures

    def _write_one(self, attempt: _Attempt, record: Record) -> list[PerflabError]:
        cell = attempt.cell
        match record:
            case NodeFacts(facts=facts):
                attempt.node = facts
            case MachineFacts(machine=machine):
                attempt.machine = machine
                attempt.wrote = True
                self.writer.add_artifact(self._cell_artifact(attempt))
            case Sample():
                attempt.wrote = True
                self.writer.add_sample(record)
            case Artifact():
                self.writer.add_artifact(record)
            case Note(benchmark=None):
                # a cell's notes about its whole run (preflight, its CPU) are about this cell
                self.writer.add_note(replace(record, benchmark=cell.benchmark))
            case Note():
                self.writer.add_note(record)
            case VariantFacts(variant=variant, info=info):
                named = self._as_named(cell, variant, info)
                self.writer.add_variant_info(variant, VariantInfo.from_json(named))
            case ProgressLine():
                self.progress.update(
                    benchmark=record.benchmark,
                    metric=Metric(record.metric),
                    detail=record.detail,
                    fraction=record.fraction,
                )
            case CellFinished(failures=failed):
                attempt.done = True
                self.places[cell.benchmark] = {**attempt.node, **attempt.machine}
                self.writer.add_note(self._measured_note(attempt))
                return [BenchmarkFailedError(text, benchmark=cell.benchmark) for text in failed]
        return []

    def _as_named(self, cell: ClusterCell, variant: str, info: dict[str, Any]) -> dict[str, Any]:
        """The variant's provenance with the refs the user gave (the node saw only the
        commits they named on the driver; `commit` keeps the SHA)."""
        provenance = info.get("provenance")
        if self.bundle is None or not isinstance(provenance, dict):
            return info
        named = named_provenance(provenance, _variant_at(cell, variant), self.bundle.commits)
        return {**info, "provenance": named}

    def _cell_artifact(self, attempt: _Attempt) -> Artifact:
        return Artifact(
            benchmark=attempt.cell.benchmark,
            variant=self.experiment.baseline.name,
            metric=ArtifactScope.CLUSTER,
            kind=CELL_KIND,
            generation=attempt.number,
            content=json.dumps({**attempt.node, "attempt": attempt.number, **attempt.machine}),
        )

    def _measured_note(self, attempt: _Attempt) -> Note:
        node = attempt.node
        host = attempt.machine.get("hostname") or node.get("node_ip")
        again = (
            f" (attempt {attempt.number}: the earlier ones' nodes died)"
            if attempt.number > 1
            else ""
        )
        return Note(
            severity=Severity.INFO,
            message=f"measured on the Ray node {host} ({node.get('node_ip')}, node "
            f"{str(node.get('node_id'))[:12]}){again}",
            benchmark=attempt.cell.benchmark,
        )

    def finished(self, generator: CellTask) -> None:
        self._release(self.pending.pop(generator))

    def failed(self, generator: CellTask, error: Exception) -> PerflabError:
        attempt = self.pending.pop(generator)
        self._release(attempt)
        cause = getattr(error, "cause", None) or error
        if isinstance(cause, PerflabError):
            text = " ".join(cause.message.split())
        else:
            text = " ".join(str(cause).split()) or type(cause).__name__
        message = f"{attempt.cell.benchmark}: the cell failed on its node: {text}"
        self.writer.add_note(
            Note(severity=Severity.WARNING, message=message, benchmark=attempt.cell.benchmark)
        )
        if isinstance(cause, PerflabError):
            return cause
        return BenchmarkFailedError(message, benchmark=attempt.cell.benchmark)

    def node_lost(self, generator: CellTask, error: Exception) -> PerflabError | None:
        """The node (or its worker) died: set the half-measured cell aside, measure it again."""
        attempt = self.pending.pop(generator)
        self._release(attempt)
        cell = attempt.cell
        node = str(attempt.node.get("node_id", "unknown"))
        reason = " ".join(str(error).split())[:200]
        if attempt.wrote:
            self.writer.rename_benchmark(
                cell.benchmark, abandoned_name(cell.benchmark, attempt.number, node)
            )
        if attempt.number >= MAX_ATTEMPTS:
            message = (
                f"{cell.benchmark}: its node died during each of {attempt.number} attempts "
                f"({reason})"
            )
            self.writer.add_note(
                Note(severity=Severity.WARNING, message=message, benchmark=cell.benchmark)
            )
            return BenchmarkFailedError(message, benchmark=cell.benchmark)
        self.writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"the node measuring this cell died (attempt {attempt.number}, node "
                f"{node[:12]}: {reason}); what it had measured is kept as "
                f"{abandoned_name(cell.benchmark, attempt.number, node)!r}, never mixed, and "
                "the cell was measured again from scratch",
                benchmark=cell.benchmark,
            )
        )
        self.start(cell, attempt.number + 1)
        return None

    def _release(self, attempt: _Attempt) -> None:
        with contextlib.suppress(Exception):
            self.api.remove_placement_group(attempt.placement_group)

    def cancel(self) -> None:
        """Ctrl-C: each cell's task stops its engine's processes; those that do not stop in
        time are killed."""
        generators = list(self.pending)
        for generator in generators:
            with contextlib.suppress(Exception):
                self.api.ray.cancel(generator)
        deadline = time.monotonic() + CANCEL_GRACE_S
        remaining = generators
        while remaining and time.monotonic() < deadline:
            ready, remaining = self.api.ray.wait(remaining, num_returns=len(remaining), timeout=0.5)
            for generator in ready:  # drain: a cancelled generator ends with an error
                with contextlib.suppress(Exception):
                    for ref in generator:
                        self.api.ray.get(ref)
        for generator in remaining:
            with contextlib.suppress(Exception):
                self.api.ray.cancel(generator, force=True)
        self.pending.clear()

    def remove_placement_groups(self) -> None:
        for group in self.groups:
            with contextlib.suppress(Exception):
                self.api.remove_placement_group(group)


def _variant_at(cell: ClusterCell, name: str) -> Variant | None:
    """The variant as the user gave it, at the cell's parameters."""
    for template in cell.experiment.variants:
        if template.name == name:
            return template.at(cell.experiment.benchmarks[0].params)
    return None


def uncommitted_notes(experiment: Experiment, bundle: CommitBundle | None) -> list[Note]:
    """The warning one machine gives, given by the driver (a node's copy has no working tree):
    a git= variant at HEAD's commit measures it as committed, without the working tree's
    changes. Once per run, for the first such variant; none when a variant measures them."""
    if bundle is None or bundle.uncommitted is None or not bundle.head:
        return []
    if measures_working_tree(experiment.variants):
        return []
    for benchmark in experiment.benchmarks:
        for template in experiment.variants:
            variant = template.at(benchmark.params)
            if not variant.git or bundle.commits.get(variant.git) != bundle.head:
                continue
            if any(os.path.basename(text) == WORKING_TREE_PATCH for text in variant.apply):
                continue
            return [
                uncommitted_note(str(bundle.origin), variant, bundle.head[:10], bundle.uncommitted)
            ]
    return []
