import sqlite3
from pathlib import Path

import pytest

from perflab.errors import StoreError
from perflab.model import (
    Artifact,
    Benchmark,
    Experiment,
    Metric,
    Note,
    RunStatus,
    Sample,
    Severity,
    Variant,
)
from perflab.store import Store
from perflab.store.migrations import SCHEMA_VERSION

EXPERIMENT = Experiment(
    benchmarks=(Benchmark("b", stmt="pass", params={"n": "1"}),),
    variants=(Variant("A"), Variant("B", env={"X": "1"}, python="/usr/bin/python3")),
)


def test_round_trip(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    writer = store.begin_run(EXPERIMENT, {"cpu_model": "x"}, "0.1")
    writer.add_sample(Sample("b", "A", Metric.TIME, "wall_ns", 123.0, loops=10, block=1, cpu=1))
    writer.add_artifact(Artifact("b", "A", Metric.INSTRUCTIONS, "callgrind.out", "data"))
    writer.add_note(Note(Severity.WARNING, "careful", hint="h", benchmark="b", metric=Metric.TIME))
    writer.add_variant_info("A", {"python_version": "3.11.7"})
    writer.add_variant_info("A", {"executable": "/x"})
    writer.finish(RunStatus.COMPLETE)
    store.close()

    again = Store.open(tmp_path / "s.db")
    run = again.load_run("latest")
    assert run.status is RunStatus.COMPLETE
    assert run.experiment == EXPERIMENT
    assert run.samples[0].per_iteration == 12.3
    assert run.artifacts[0].content == "data"
    assert run.notes[0].metric is Metric.TIME
    assert run.variant_info["A"] == {"python_version": "3.11.7", "executable": "/x"}
    assert again.list_runs()[0].n_samples == 1


def test_run_references(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    with pytest.raises(StoreError, match="empty"):
        store.resolve_run_id("latest")
    first = store.begin_run(EXPERIMENT, {}, "0.1").run_id
    second = store.begin_run(EXPERIMENT, {}, "0.1").run_id
    assert store.resolve_run_id("latest") == second
    assert store.resolve_run_id(-2) == first
    assert store.resolve_run_id(str(first)) == first
    with pytest.raises(StoreError, match="no run 99"):
        store.resolve_run_id(99)
    with pytest.raises(StoreError, match="not a run id"):
        store.resolve_run_id("yesterday")


def test_schema_is_versioned_and_newer_stores_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store.open(path).close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreError, match="newer than this perflab"):
        Store.open(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a perflab store"):
        Store.open(path)


def test_notes_said_again_per_benchmark_are_shown_once() -> None:
    from perflab.engine import dedupe_notes

    run_level = Note(Severity.WARNING, "event x is unavailable", hint="h", metric=Metric.COUNTERS)
    per_benchmark = Note(
        Severity.WARNING,
        "event x was not measured",
        hint="h",
        benchmark="b",
        metric=Metric.COUNTERS,
    )
    other = Note(Severity.INFO, "something else", metric=Metric.TIME)
    notes = [run_level, per_benchmark, per_benchmark, other]
    assert dedupe_notes(notes) == [per_benchmark, other]


def test_a_run_reads_back_what_it_stored_so_far(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    writer = store.begin_run(EXPERIMENT, {}, "0.1")
    writer.add_sample(Sample("b", "A", Metric.COUNTERS, "task-clock", 5.0))
    writer.add_sample(Sample("b", "A", Metric.TIME, "wall_ns", 5.0))
    other = store.begin_run(EXPERIMENT, {}, "0.1")
    other.add_sample(Sample("b", "A", Metric.COUNTERS, "task-clock", 7.0))
    (sample,) = writer.data_for("b", Metric.COUNTERS).samples
    assert sample.value == 5.0
