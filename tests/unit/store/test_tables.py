"""The store's reads and writes (store/tables.py) on an in-memory SQLite database of the
current schema: run references, what a run reads back (of some metrics only), the runs of code,
and a writer whose every statement is wrapped and followed by its check."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator

import pytest

from perflab.api import make_experiment
from perflab.records.errors import StoreError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, Note, Sample, Severity
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.store.dialect import SQLITE
from perflab.store.migrations import MIGRATIONS, statements
from perflab.store.tables import RunTables, SqlRunWriter

TIME = Metric("time")
RSS = Metric("rss")


@pytest.fixture
def tables() -> Iterator[RunTables]:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    for step in MIGRATIONS:
        for statement in statements(step):
            connection.execute(statement)
    yield RunTables(connection, SQLITE, "the test store")
    connection.close()


def begin(
    tables: RunTables,
    errors: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    written: Callable[[], None] = lambda: None,
) -> SqlRunWriter:
    run_id = tables.insert_run(
        make_experiment(stmt="pass"), MachineInfo(cpu_model="test"), "0.test"
    )
    return SqlRunWriter(tables.connection, SQLITE, run_id, errors=errors, written=written)


def sample(metric: Metric, value: float) -> Sample:
    return Sample("b", "A", metric, "wall_ns", value)


def test_a_run_reads_back_as_it_was_written(tables: RunTables) -> None:
    writer = begin(tables)
    written = Sample("b", "A", TIME, "wall_ns", 5.0, loops=10, generation=1, block=2, position=1,
                     cpu=3, at_ns=7, warmup=True, run_queue_ns=4, cpu_ns=3,
                     involuntary_switches=1)  # fmt: skip
    writer.add_sample(written)
    artifact = Artifact("b", "A", TIME, "time-shared-cpu", '{"pids": []}', generation=2)
    writer.add_artifact(artifact)
    note = Note(Severity.WARNING, "noisy", hint="close it", benchmark="b", metric=TIME)
    writer.add_note(note)
    writer.add_note(Note(Severity.INFO, "said once"))
    writer.finish(RunStatus.INCOMPLETE, "it broke")
    run = tables.load_run(writer.run_id)
    assert run.samples == (written,) and run.artifacts == (artifact,)
    assert run.notes == (note, Note(Severity.INFO, "said once"))
    assert (run.status, run.error, run.perflab_version) == (
        RunStatus.INCOMPLETE,
        "it broke",
        "0.test",
    )
    assert run.machine.to_json() == {"cpu_model": "test"} and run.finished_at is not None
    assert [b.stmt for b in run.experiment.benchmarks] == ["pass"]


def test_a_run_read_for_some_metrics_holds_only_theirs(tables: RunTables) -> None:
    writer = begin(tables)
    writer.add_sample(sample(TIME, 1.0))
    writer.add_sample(sample(RSS, 2.0))
    writer.add_artifact(Artifact("b", "A", RSS, "k", "c"))
    assert [s.metric for s in tables.load_run(writer.run_id, [RSS]).samples] == [RSS]
    assert len(tables.load_run(writer.run_id, [RSS]).artifacts) == 1
    nothing = tables.load_run(writer.run_id, [])
    assert nothing.samples == () and nothing.artifacts == ()
    assert len(tables.load_run(writer.run_id).samples) == 2


def test_the_samples_so_far_of_one_benchmark_and_lens(tables: RunTables) -> None:
    writer = begin(tables)
    writer.add_sample(sample(TIME, 1.0))
    writer.add_sample(sample(RSS, 2.0))
    writer.add_sample(Sample("other", "A", TIME, "wall_ns", 3.0))
    assert [s.value for s in writer.data_for("b", TIME).samples] == [1.0]


def test_a_renamed_benchmark_is_renamed_in_everything_the_run_stored(tables: RunTables) -> None:
    writer = begin(tables)
    writer.add_sample(sample(TIME, 1.0))
    writer.add_artifact(Artifact("b", "A", TIME, "k", "c"))
    writer.add_note(Note(Severity.INFO, "n", benchmark="b"))
    writer.rename_benchmark("b", "b[1]")
    run = tables.load_run(writer.run_id)
    assert {s.benchmark for s in run.samples} | {a.benchmark for a in run.artifacts} == {"b[1]"}
    assert run.notes[0].benchmark == "b[1]"


def test_a_variants_facts_accumulate(tables: RunTables) -> None:
    writer = begin(tables)
    writer.add_variant_info(
        "A", VariantInfo.from_json({"python": "3.12", "time": {"b": {"loops": 10}}})
    )
    writer.add_variant_info(
        "A", VariantInfo.from_json({"python": "3.13", "time": {"c": {"loops": 20}}})
    )
    assert tables.load_run(writer.run_id).variant_info == {
        "A": {"python": "3.13", "time": {"b": {"loops": 10}, "c": {"loops": 20}}}
    }


def test_each_write_is_wrapped_and_checked_after(tables: RunTables) -> None:
    said: list[str] = []

    @contextlib.contextmanager
    def errors() -> Iterator[None]:
        said.append("wrapped")
        yield

    writer = begin(tables, errors=errors, written=lambda: said.append("checked"))
    writer.add_sample(sample(TIME, 1.0))
    writer.finish(RunStatus.COMPLETE)
    assert said == ["wrapped", "checked"] * 2


def test_run_references(tables: RunTables) -> None:
    ids = [begin(tables).run_id for _ in range(3)]
    assert tables.run_ids() == ids
    assert tables.resolve_run_id("latest") == tables.resolve_run_id(" last ") == ids[-1]
    assert tables.resolve_run_id(-2) == ids[1] and tables.resolve_run_id(str(ids[0])) == ids[0]
    for missing in (ids[-1] + 1, 2**63, -(2**63)):
        with pytest.raises(StoreError, match="there is no run .* in the test store"):
            tables.resolve_run_id(missing)
    with pytest.raises(StoreError, match="there is no such run in the store"):
        tables.resolve_run_id(-4)
    with pytest.raises(StoreError, match="'first' is not a run id") as raised:
        tables.resolve_run_id("first")
    assert "perflab list" in (raised.value.hint or "")


def test_an_empty_store_says_so(tables: RunTables) -> None:
    with pytest.raises(StoreError, match="the store is empty"):
        tables.resolve_run_id("latest")
    assert tables.list_runs() == [] and tables.runs_of_code() == []


def test_the_list_is_newest_first_with_its_sample_counts(tables: RunTables) -> None:
    first, second = begin(tables), begin(tables)
    first.add_sample(sample(TIME, 1.0))
    first.finish(RunStatus.COMPLETE)
    listed = tables.list_runs()
    assert [(r.run_id, r.n_samples) for r in listed] == [(second.run_id, 0), (first.run_id, 1)]
    assert listed[1].status is RunStatus.COMPLETE
    assert listed[0].status is RunStatus.RUNNING  # its process, this one, is alive
    assert [r.run_id for r in tables.list_runs(limit=1)] == [second.run_id]


def test_the_runs_of_code_are_those_with_a_commit_oldest_first(tables: RunTables) -> None:
    plain, first, second = begin(tables), begin(tables), begin(tables)
    plain.add_variant_info(
        "A", VariantInfo.from_json({"provenance": {"ref": "main"}})
    )  # no commit: not code
    commit = {"ref": "main", "commit": "c" * 40, "tree": "t", "build": None, "changes": []}
    second.add_variant_info("A", VariantInfo.from_json({"provenance": commit}))
    first.add_variant_info("B", VariantInfo.from_json({"provenance": {**commit, "extra": 1}}))
    runs = tables.runs_of_code()
    assert [(r.run_id, list(r.provenance)) for r in runs] == [
        (first.run_id, ["B"]),
        (second.run_id, ["A"]),
    ]
    (listed,) = [r for r in tables.list_runs() if r.run_id == first.run_id]
    assert listed.provenance == {"B": commit}  # the listing keeps the provenance's own fields
