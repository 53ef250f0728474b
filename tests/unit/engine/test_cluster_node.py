"""A cell's store on its node (engine/cluster_node.py): it streams each write to the driver and
is never analysed."""

from __future__ import annotations

import pickle
import queue

from perflab.api import make_experiment
from perflab.engine.cluster_node import MachineFacts, RecordQueue, StreamingStore
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Sample
from perflab.records.run_facts import MachineInfo
from perflab.store import RunStore
from perflab.store.protocol import RunRecorder


def test_a_cells_store_streams_each_write_and_is_never_analysed() -> None:
    """The cell's store on its node only records (measure_experiment): nothing reads it back to
    analyse, so it has no load_run to skip; each write is queued for the driver."""
    records: RecordQueue = queue.Queue()
    store = StreamingStore(records)
    assert isinstance(store, RunRecorder) and not isinstance(store, RunStore)
    writer = store.begin_run(
        make_experiment(stmt="pass"), MachineInfo.from_json({"cpu": "x"}), "test"
    )
    sample = Sample("b", "A", Metric.TIME, "wall_ns", 1.0)
    writer.add_sample(sample)
    writer.finish(RunStatus.COMPLETE)
    assert writer.data_for("b", Metric.TIME).samples == (sample,)
    sent = [records.get_nowait() for _ in range(2)]
    assert sent == [MachineFacts({"cpu": "x"}), sample]
    # the driver tells the records apart by their type: they cross to it pickled
    received = pickle.loads(pickle.dumps(sent))
    assert [type(r) for r in received] == [MachineFacts, Sample] and received == sent
