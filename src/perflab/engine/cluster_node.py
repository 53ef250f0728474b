"""What a cell's Ray task does on its node. The ordinary engine measures the cell in a thread while
every record it writes (samples, artifacts, notes, variant facts, the node's machine facts) is
queued and sent back to the driver in batches; the node's time for a reference loop goes first, so
histories can normalise times per node."""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from perflab.git.bundle import CommitBundle, unpack_commits
from perflab.machine.proc import stop_all_contained
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, BenchmarkData, Experiment, Note, Sample
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.store import RunSink, SqliteStore
from perflab.store.codec import experiment_from_json

if TYPE_CHECKING:  # Ray is imported only when a cluster runs; the engine when a cell does
    from ray import ObjectRef

    from perflab.engine.benchmark_plan import SpeedsMeasured

# a batch is sent when this old or this large, so the driver's store follows the measuring
BATCH_S = 0.5
BATCH_RECORDS = 2000
# after Ctrl-C: how long cancelled cells get to stop their processes before being killed
CANCEL_GRACE_S = 15.0
# the reference loop each cell times on its node before measuring: a fixed pure-Python loop,
# best of a few short repeats, so histories can normalise times per node at little cost to a cell
REFERENCE_LOOPS = 100_000
REFERENCE_REPEATS = 5


@dataclass(frozen=True)
class NodeFacts:
    """Where the cell runs (node id and address, the task's pid) and its reference loop's
    time: the first record."""

    facts: dict[str, Any]


@dataclass(frozen=True)
class MachineFacts:
    """The node's machine facts, as the run records them."""

    machine: dict[str, Any]


@dataclass(frozen=True)
class VariantFacts:
    """A variant's facts (`add_variant_info`)."""

    variant: str
    info: dict[str, Any]


@dataclass(frozen=True)
class ProgressLine:
    """A progress update of the cell's engine, shown by the driver."""

    benchmark: str
    metric: str
    detail: str
    fraction: float | None


@dataclass(frozen=True)
class CellFinished:
    """The cell's status and failures: the last record."""

    status: str
    failures: list[str]


class _EndOfRecords:
    """The engine stopped writing: ends the batches, never sent."""


# what a cell's task sends the driver, which writes each into the run (`cluster.py`): its
# samples, artifacts and notes as they are, the rest in the records above
Record = (
    NodeFacts | MachineFacts | Sample | Artifact | Note | VariantFacts | ProgressLine | CellFinished
)
# the records as the engine's thread queues them for the batches, ended by _END
RecordQueue = queue.Queue[Record | _EndOfRecords]


class StreamingStore:
    """The cell's store on its node (a RunRecorder): in memory (the engine reads its own samples
    back while measuring), each write also queued for the driver, which analyses the whole run
    from its own store."""

    def __init__(self, records: RecordQueue) -> None:
        self.memory = SqliteStore.in_memory()
        self.records = records

    def begin_run(
        self, experiment: Experiment, machine: MachineInfo, perflab_version: str
    ) -> RunSink:
        self.records.put(MachineFacts(machine.to_json()))
        writer = self.memory.begin_run(experiment, machine, perflab_version)
        return _StreamingWriter(writer, self.records)


class _StreamingWriter:
    """A RunSink that writes into `sink` and queues each record for the driver."""

    def __init__(self, sink: RunSink, records: RecordQueue) -> None:
        self.sink = sink
        self.records = records

    @property
    def run_id(self) -> int:
        return self.sink.run_id

    def add_sample(self, sample: Sample) -> None:
        self.sink.add_sample(sample)
        self.records.put(sample)

    def add_artifact(self, artifact: Artifact) -> None:
        self.sink.add_artifact(artifact)
        self.records.put(artifact)

    def add_note(self, note: Note) -> None:
        self.sink.add_note(note)
        self.records.put(note)

    def add_variant_info(self, variant: str, info: VariantInfo) -> None:
        self.sink.add_variant_info(variant, info)
        self.records.put(VariantFacts(variant, info.to_json()))

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        return self.sink.data_for(benchmark, metric)

    def rename_benchmark(self, old: str, new: str) -> None:
        self.sink.rename_benchmark(old, new)  # the node's copy only: the driver renames its own

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        self.sink.finish(status, error)


class _QueuedProgress:
    def __init__(self, records: RecordQueue) -> None:
        self.records = records

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None:
        self.records.put(ProgressLine(benchmark, str(metric), detail, fraction))


_END = _EndOfRecords()


def measure_cell(
    experiment_json: dict[str, Any],
    cwd: str,
    cache_dir: str | None,
    commits: CommitBundle | None = None,
    bundle_data: list[ObjectRef[bytes]] | None = None,
) -> Iterator[list[Record]]:
    """The Ray task of one cell (a generator: each item is a batch of records). The engine runs
    in a thread of the task, so batches are sent while it measures. `commits` comes without
    its data; `bundle_data` holds the data's object in Ray's store, inside a list so that Ray
    does not fetch it for the task: the node fetches it only when its copy lacks a commit."""
    import ray

    def fetch() -> bytes:
        assert bundle_data
        return ray.get(bundle_data[0])

    if os.path.isdir(cwd):  # relative paths of the experiment, where the node has them
        os.chdir(cwd)
    context = ray.get_runtime_context()
    node = {
        "node_id": context.get_node_id(),
        "node_ip": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        "pid": os.getpid(),
        "reference_ns": reference_loop_ns(),
    }
    records: RecordQueue = queue.Queue()
    outcome: dict[str, Any] = {}
    thread = threading.Thread(
        target=_measure_in_thread,
        args=(experiment_json, commits, fetch, cache_dir, records, outcome),
        name="perflab-cell",
        daemon=True,
    )
    yield [NodeFacts(node)]
    thread.start()
    try:
        yield from _batches(records)
    finally:
        if thread.is_alive():  # cancelled: stop what the engine started, then the engine
            stop_all_contained()
            thread.join(CANCEL_GRACE_S)
    if "error" in outcome:
        raise outcome["error"]
    yield [CellFinished(outcome["status"], outcome["failures"])]


def reference_loop_ns(clock: Callable[[], int] = time.perf_counter_ns) -> int:
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
    records: RecordQueue,
    outcome: dict[str, Any],
) -> None:
    """The engine on the cell's experiment, its records put in `records` (then _END); its
    status and failures, or the error that stopped it, in `outcome`."""
    from perflab.engine.run import measure_experiment
    from perflab.engine.services import RunServices

    try:
        # measured only: the driver analyses the whole run from its own store
        measured = measure_experiment(
            # git= commits come as a bundle: the node needs no copy of the repository
            unpack_commits(
                experiment_from_json(experiment_json), commits, cache_dir=cache_dir, fetch=fetch
            ),
            store=StreamingStore(records),
            services=RunServices(
                progress=_QueuedProgress(records), cache_dir=cache_dir, speeds=_node_speeds()
            ),
        )
        outcome["status"] = str(measured.status)
        outcome["failures"] = [str(f) for f in measured.failures]
    except BaseException as error:  # the cell's own failure: the driver records it
        outcome["error"] = error
    finally:
        records.put(_END)


@functools.cache
def _node_speeds() -> SpeedsMeasured:
    """The machine speeds this node's process has measured: the cells it runs one after another
    on one machine share them, as one perflab process's runs do (services.RunServices)."""
    from perflab.engine.benchmark_plan import SpeedsMeasured

    return SpeedsMeasured()


def _batches(records: RecordQueue) -> Iterator[list[Record]]:
    """The records until _END, in batches sent every BATCH_S or BATCH_RECORDS records."""
    batch: list[Record] = []
    sent_at = time.monotonic()
    while True:
        with contextlib.suppress(queue.Empty):
            record = records.get(timeout=BATCH_S / 4)
            if isinstance(record, _EndOfRecords):
                break
            batch.append(record)
        if batch and (time.monotonic() - sent_at > BATCH_S or len(batch) >= BATCH_RECORDS):
            yield batch
            batch, sent_at = [], time.monotonic()
    if batch:
        yield batch
