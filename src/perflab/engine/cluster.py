"""Cells on a Ray cluster (`--ray`): each benchmark of an experiment is a *cell*, all its
variants interleaved on one node by the ordinary engine, so every comparison, step of a stack and
interaction of a matrix is made between samples of one machine. Cells are independent: each
becomes one Ray task in a placement group of one STRICT_PACK bundle (the measuring CPU and the
orchestrating one, and memory), and Ray places the bundles on whichever nodes have them free.

The task streams what its engine writes (samples, artifacts, notes, variant facts, the node's
machine facts) back to the driver in batches as it measures; the driver writes them into its one
store, under one run, at once. A cell whose node dies is kept, renamed `NAME (abandoned ...)`
(analysis never reads it), and measured again from scratch on another node; a cell that fails
for its own reasons is recorded and not retried. Ctrl-C cancels the tasks, whose engines stop
every process they started.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from perflab.analyse.machines import CELL_KIND, CLUSTER_METRIC, cell_place, places_note
from perflab.engine.prepare.git_prepare import (
    WORKING_TREE_PATCH,
    measures_working_tree,
    uncommitted_note,
)
from perflab.git.bundle import (
    CommitBundle,
    bundle_commits,
    named_provenance,
    unpack_commits,
)
from perflab.git.cache_entry import default_cache_dir
from perflab.machine.host import machine_facts
from perflab.machine.proc import SubprocessRunner, stop_all_contained
from perflab.machine.scratch import make_private_folder
from perflab.measure.lens import NullProgress, ProgressReporter
from perflab.records.errors import (
    BenchmarkFailedError,
    ConfigError,
    PerflabError,
    RunInterrupted,
    StoreError,
)
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import (
    Artifact,
    BenchmarkData,
    Experiment,
    Note,
    Sample,
    Severity,
    Variant,
)
from perflab.records.results import RunResult
from perflab.records.version import __version__
from perflab.store import RunSink, RunStore, SqliteStore
from perflab.store.codec import experiment_from_json, experiment_to_json

# a cell's bundle: the CPU the lenses measure on and the one perflab orchestrates from
CELL_CPUS = 2
CELL_MEMORY_BYTES = 512 * 2**20
# a node that dies mid-cell: the cell is measured again, at most this many times in all
MAX_ATTEMPTS = 3
# a batch is sent when this old or this large, so the driver's store follows the measuring
BATCH_S = 0.5
BATCH_RECORDS = 2000
# after Ctrl-C: how long cancelled cells get to stop their processes before being killed
CANCEL_GRACE_S = 15.0
ABANDONED = "abandoned"
# the reference loop each cell times on its node before measuring: a fixed pure-Python loop,
# best of a few repeats (about 0.1 s in all), so histories can normalise times per node
REFERENCE_LOOPS = 100_000
REFERENCE_REPEATS = 5


@dataclass(frozen=True)
class Cell:
    benchmark: str
    experiment: Experiment  # the whole experiment with only this benchmark


def cells_of(experiment: Experiment) -> tuple[Cell, ...]:
    """One cell per benchmark: all pairs and interactions are within a benchmark."""
    return tuple(Cell(b.name, replace(experiment, benchmarks=(b,))) for b in experiment.benchmarks)


def abandoned_name(benchmark: str, attempt: int, node: str) -> str:
    return f"{benchmark} ({ABANDONED}: attempt {attempt} on node {node[:12]})"


# ---- on the node


class _StreamingStore:
    """The cell's store on its node (a RunRecorder): in memory (the engine reads its own samples
    back while measuring), each write also queued for the driver, which analyses the whole run
    from its own store."""

    def __init__(self, records: queue.Queue[tuple[str, Any]]) -> None:
        self.memory = SqliteStore.in_memory()
        self.records = records

    def begin_run(
        self, experiment: Experiment, machine: Mapping[str, Any], perflab_version: str
    ) -> RunSink:
        self.records.put(("machine", dict(machine)))
        writer = self.memory.begin_run(experiment, machine, perflab_version)
        return _StreamingWriter(writer, self.records)


class _StreamingWriter:
    """A RunSink that writes into `sink` and queues each record for the driver."""

    def __init__(self, sink: RunSink, records: queue.Queue[tuple[str, Any]]) -> None:
        self.sink = sink
        self.records = records

    @property
    def run_id(self) -> int:
        return self.sink.run_id

    def add_sample(self, sample: Sample) -> None:
        self.sink.add_sample(sample)
        self.records.put(("sample", sample))

    def add_artifact(self, artifact: Artifact) -> None:
        self.sink.add_artifact(artifact)
        self.records.put(("artifact", artifact))

    def add_note(self, note: Note) -> None:
        self.sink.add_note(note)
        self.records.put(("note", note))

    def add_variant_info(self, variant: str, info: Mapping[str, Any]) -> None:
        self.sink.add_variant_info(variant, info)
        self.records.put(("variant_info", (variant, dict(info))))

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        return self.sink.data_for(benchmark, metric)

    def rename_benchmark(self, old: str, new: str) -> None:
        self.sink.rename_benchmark(old, new)  # the node's copy only: the driver renames its own

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        self.sink.finish(status, error)


class _QueuedProgress:
    def __init__(self, records: queue.Queue[tuple[str, Any]]) -> None:
        self.records = records

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None:
        self.records.put(("progress", (benchmark, str(metric), detail, fraction)))


_END = ("end", None)


def measure_cell(
    experiment_json: dict[str, Any],
    cwd: str,
    cache_dir: str | None,
    commits: CommitBundle | None = None,
    bundle_data: list[Any] | None = None,
) -> Iterator[list[tuple[str, Any]]]:
    """The Ray task of one cell (a generator: each item is a batch of records). The engine runs
    in a thread of the task, so batches are sent while it measures. `commits` comes without
    its data; `bundle_data` holds the data's object in Ray's store, inside a list so that Ray
    does not fetch it for the task: the node fetches it only when its copy lacks a commit."""
    import ray

    def fetch() -> bytes:
        assert bundle_data
        data: bytes = ray.get(bundle_data[0])
        return data

    if os.path.isdir(cwd):  # relative paths of the experiment, where the node has them
        os.chdir(cwd)
    context = ray.get_runtime_context()
    node = {
        "node_id": context.get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        "pid": os.getpid(),
        "reference_ns": reference_loop_ns(),
    }
    records: queue.Queue[tuple[str, Any]] = queue.Queue()
    outcome: dict[str, Any] = {}
    thread = threading.Thread(
        target=_measure_in_thread,
        args=(experiment_json, commits, fetch, cache_dir, records, outcome),
        name="perflab-cell",
        daemon=True,
    )
    yield [("node", node)]
    thread.start()
    try:
        yield from _batches(records)
    finally:
        if thread.is_alive():  # cancelled: stop what the engine started, then the engine
            stop_all_contained()
            thread.join(CANCEL_GRACE_S)
    if "error" in outcome:
        raise outcome["error"]
    yield [("finished", {"status": outcome["status"], "failures": outcome["failures"]})]


def reference_loop_ns(clock: Any = time.perf_counter_ns) -> int:
    """This node's time for one fixed pure-Python loop, the best of REFERENCE_REPEATS: the
    same work on every node, so the ratio of two nodes' references is their ratio of speed
    for CPU-bound Python (and only an estimate of it for other work)."""
    best: int | None = None
    for _ in range(REFERENCE_REPEATS):
        started = clock()
        total = 0
        for number in range(REFERENCE_LOOPS):
            total += number * number % 7
        elapsed = int(clock() - started)
        best = elapsed if best is None else min(best, elapsed)
    assert best is not None
    return best


def _measure_in_thread(
    experiment_json: dict[str, Any],
    commits: CommitBundle | None,
    fetch: Callable[[], bytes],
    cache_dir: str | None,
    records: queue.Queue[tuple[str, Any]],
    outcome: dict[str, Any],
) -> None:
    """The engine on the cell's experiment, its records put in `records` (then _END); its
    status and failures, or the error that stopped it, in `outcome`."""
    from perflab.engine.run import measure_experiment

    try:
        # measured only: the driver analyses the whole run from its own store
        measured = measure_experiment(
            # git= commits come as a bundle: the node needs no copy of the repository
            unpack_commits(
                experiment_from_json(experiment_json), commits, cache_dir=cache_dir, fetch=fetch
            ),
            store=_StreamingStore(records),
            progress=_QueuedProgress(records),
            cache_dir=cache_dir,
        )
        outcome["status"] = str(measured.status)
        outcome["failures"] = [str(f) for f in measured.failures]
    except BaseException as error:  # the cell's own failure: the driver records it
        outcome["error"] = error
    finally:
        records.put(_END)


def _batches(records: queue.Queue[tuple[str, Any]]) -> Iterator[list[tuple[str, Any]]]:
    """The records until _END, in batches sent every BATCH_S or BATCH_RECORDS records."""
    batch: list[tuple[str, Any]] = []
    sent_at = time.monotonic()
    while True:
        with contextlib.suppress(queue.Empty):
            record = records.get(timeout=BATCH_S / 4)
            if record is _END:
                break
            batch.append(record)
        if batch and (time.monotonic() - sent_at > BATCH_S or len(batch) >= BATCH_RECORDS):
            yield batch
            batch, sent_at = [], time.monotonic()
    if batch:
        yield batch


# ---- on the driver


@dataclass
class _Attempt:
    cell: Cell
    number: int
    placement_group: Any
    node: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    wrote: bool = False  # anything of this attempt is in the store
    done: bool = False  # its last batch arrived: the cell is measured whatever happens next


class _Ray:
    """What the driver needs of Ray, imported only for --ray."""

    def __init__(self) -> None:
        try:
            import ray
            import ray.exceptions
            from ray.util.placement_group import placement_group, remove_placement_group
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        except ImportError as error:
            raise ConfigError(
                "--ray needs Ray, which is not installed",
                hint="pip install 'perflab[cluster]' (or pip install ray) here and on every node",
            ) from error
        quiet_ray_notices(logging.getLogger("ray"))
        self.ray = ray
        self.exceptions = ray.exceptions
        self.placement_group = placement_group
        self.remove_placement_group = remove_placement_group
        self.strategy = PlacementGroupSchedulingStrategy
        self.task = ray.remote(measure_cell)


# Ray's notices about its own set-up, below an error: a local cluster turning on token
# authentication by default is Ray's business, not a finding of the run the user asked for
_RAY_SETUP_LOGGERS = ("ray._private.authentication",)


class _RaySetupNotices(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.name.startswith(_RAY_SETUP_LOGGERS)


def quiet_ray_notices(logger: logging.Logger) -> None:
    """Keep Ray's set-up notices out of perflab's output (its errors still pass): on the
    handlers Ray put on its logger, which print what its modules log."""
    for handler in logger.handlers:
        if not any(isinstance(f, _RaySetupNotices) for f in handler.filters):
            handler.addFilter(_RaySetupNotices())


def run_on_cluster(
    experiment: Experiment,
    *,
    store: RunStore,
    progress: ProgressReporter | None = None,
    cache_dir: str | Path | None = None,
) -> RunResult:
    """Measure the experiment's cells on a Ray cluster (`settings.ray_address`, or a local one
    started here and stopped at the end); one run in `store`, written as cells measure."""
    from perflab.analyse.run import analyse_run

    api = _Ray()
    progress = progress or NullProgress()
    address = experiment.settings.ray_address
    started_here = not api.ray.is_initialized()
    # a local cluster keeps its session in a private folder of perflab's, removed at the end
    # (Ray's default is a shared, world-writable $TMPDIR/ray that it never cleans)
    local = started_here and not address and not os.environ.get("RAY_ADDRESS")
    session = _ray_session_folder() if local else None
    try:
        if started_here:
            _connect(api, address, None if session is None else str(session))
        machine = _cluster_machine(api, address)
        writer = store.begin_run(experiment, machine, __version__)
        failures = _drive(_Driver(api, experiment, writer, progress, cache_dir), writer)
    finally:
        if started_here:
            api.ray.shutdown()
        if session is not None:
            shutil.rmtree(session, ignore_errors=True)
    status = RunStatus.INCOMPLETE if failures else RunStatus.COMPLETE
    writer.finish(status, error="; ".join(str(f) for f in failures) or None)
    result = analyse_run(store.load_run(writer.run_id))
    return replace(result, failures=tuple(failures))


# what Ray puts under its temporary folder for a socket: a unix socket's path holds 107 bytes
RAY_SOCKET_TAIL = len("/session_2026-11-28_12-04-11_671752_4194304/sockets/plasma_store")


def _ray_session_folder() -> Path:
    """A private folder for a local cluster's session: in $TMPDIR, or in /tmp where $TMPDIR
    is too deep for Ray's sockets."""
    folder = make_private_folder("ray")
    if len(str(folder)) + RAY_SOCKET_TAIL <= 107 or not os.path.isdir("/tmp"):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    return make_private_folder("ray", "/tmp")


def _connect(api: _Ray, address: str | None, temp_dir: str | None) -> None:
    try:
        api.ray.init(
            address=address or None,
            log_to_driver=False,
            logging_level="WARNING",
            **({} if temp_dir is None else {"_temp_dir": temp_dir}),
        )
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise ConfigError(
            f"cannot connect to the Ray cluster {address!r}: {error}",
            hint="start it with `ray start --head` and pass its address (host:6379), or "
            "--ray alone for a local cluster",
        ) from error


def _cluster_machine(api: _Ray, address: str | None) -> dict[str, Any]:
    """The driver's machine facts and the cluster's; refuses a cluster too small for a cell."""
    resources = api.ray.cluster_resources()
    if resources.get("CPU", 0) < CELL_CPUS:
        raise ConfigError(
            f"the Ray cluster has {resources.get('CPU', 0):g} CPUs; a cell needs {CELL_CPUS} "
            "on one node (the measuring CPU and perflab's)",
            hint="start nodes with at least 2 CPUs (ray start --num-cpus 2)",
        )
    return {
        **machine_facts(SubprocessRunner(), cpu=None),
        "cluster": {
            "address": address or "local",
            "nodes": len([n for n in api.ray.nodes() if n.get("Alive")]),
            "cpus": resources.get("CPU", 0),
        },
    }


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
        api: _Ray,
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
        self.pending: dict[Any, _Attempt] = {}  # generator -> its attempt
        self.groups: list[Any] = []
        self.bundle: CommitBundle | None = None  # the git= variants' commits
        self.commits: CommitBundle | None = None  # the bundle without its data
        self.bundle_data: list[Any] = []  # the data, in Ray's object store
        self.places: dict[str, dict[str, Any]] = {}  # benchmark -> its measured cell's facts

    def start(self, cell: Cell, number: int) -> None:
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

    def write(self, attempt: _Attempt, batch: list[tuple[str, Any]]) -> list[PerflabError]:
        cell = attempt.cell
        failures: list[PerflabError] = []
        for kind, value in batch:
            if kind == "node":
                attempt.node = value
            elif kind == "machine":
                attempt.machine = value
                attempt.wrote = True
                self.writer.add_artifact(self._cell_artifact(attempt))
            elif kind == "sample":
                attempt.wrote = True
                self.writer.add_sample(value)
            elif kind == "artifact":
                self.writer.add_artifact(value)
            elif kind == "note":
                note: Note = value
                # a cell's notes about its whole run (preflight, its CPU) are about this cell
                self.writer.add_note(
                    note if note.benchmark is not None else replace(note, benchmark=cell.benchmark)
                )
            elif kind == "variant_info":
                variant, info = value
                self.writer.add_variant_info(variant, self._as_named(cell, variant, info))
            elif kind == "progress":
                benchmark, metric, detail, fraction = value
                self.progress.update(
                    benchmark=benchmark, metric=Metric(metric), detail=detail, fraction=fraction
                )
            elif kind == "finished":
                attempt.done = True
                self.places[cell.benchmark] = {**attempt.node, **attempt.machine}
                self.writer.add_note(self._measured_note(attempt))
                failures += [
                    BenchmarkFailedError(text, benchmark=cell.benchmark)
                    for text in value["failures"]
                ]
        return failures

    def _as_named(self, cell: Cell, variant: str, info: dict[str, Any]) -> dict[str, Any]:
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
            metric=CLUSTER_METRIC,
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

    def finished(self, generator: Any) -> None:
        self._release(self.pending.pop(generator))

    def failed(self, generator: Any, error: Exception) -> PerflabError:
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

    def node_lost(self, generator: Any, error: Exception) -> PerflabError | None:
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


def _variant_at(cell: Cell, name: str) -> Variant | None:
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
