import sqlite3
from pathlib import Path

import pytest

from perflab.records.errors import StoreError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Experiment, Sample, Variant
from perflab.store import SqliteStore
from perflab.store.migrations import SCHEMA_VERSION

EXPERIMENT = Experiment(
    benchmarks=(Benchmark("b", stmt="pass", params={"n": "1"}),),
    variants=(Variant("A"), Variant("B", env={"X": "1"}, python="/usr/bin/python3")),
)


def test_schema_is_versioned_and_newer_stores_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore.open(path).close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(StoreError, match="newer than this perflab"):
        SqliteStore.open(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a perflab store"):
        SqliteStore.open(path)


def test_reading_opens_read_only_and_never_migrates(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore.open(path).close()
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 1")  # pretend an older schema
    connection.close()
    before = path.read_bytes()
    reader = SqliteStore.open(path, create=False)
    assert reader.read_only and reader.list_runs() == []
    with pytest.raises(StoreError, match="opened for reading"):
        reader.begin_run(EXPERIMENT, {}, "0.1")
    reader.close()
    assert path.read_bytes() == before


def test_samples_of_a_schema_2_store_read_without_scheduler_accounting(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore.open(path)
    writer = store.begin_run(EXPERIMENT, {}, "0.1")
    writer.add_sample(Sample("b", "A", Metric.TIME, "wall_ns", 5.0, run_queue_ns=1))
    writer.finish(RunStatus.COMPLETE)
    store.close()
    connection = sqlite3.connect(path)
    for column in ("run_queue_ns", "cpu_ns", "involuntary_switches"):
        connection.execute(f"ALTER TABLE samples DROP COLUMN {column}")
    connection.execute("PRAGMA user_version = 2")
    connection.commit()
    connection.close()
    reader = SqliteStore.open(path, create=False)
    (sample,) = reader.load_run("latest").samples
    assert sample.value == 5.0 and sample.run_queue_ns is None
    reader.close()
    migrated = SqliteStore.open(path)  # opened for writing: migrated, the old samples kept
    assert migrated.load_run("latest").samples[0].value == 5.0
    migrated.close()


def test_an_empty_file_reads_as_an_empty_store_and_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    store = SqliteStore.open(path, create=False)
    assert store.list_runs() == []
    with pytest.raises(StoreError, match="empty"):
        store.load_run("latest")
    store.close()
    assert path.stat().st_size == 0


def test_a_run_whose_process_is_gone_reads_as_interrupted(tmp_path: Path) -> None:
    from perflab.store.owner import ProcessIdentity

    me = ProcessIdentity.current()
    assert me.is_alive() is True
    assert (
        ProcessIdentity(me.pid, (me.start_ticks or 0) + 1, me.boot_id, me.host).is_alive() is False
    )
    assert ProcessIdentity(me.pid, me.start_ticks, "another-boot", me.host).is_alive() is False
    assert ProcessIdentity(me.pid, me.start_ticks, me.boot_id, "other-host").is_alive() is None

    store = SqliteStore.open(tmp_path / "s.db")
    alive = store.begin_run(EXPERIMENT, {}, "0.1")
    dead = store.begin_run(EXPERIMENT, {}, "0.1")
    # the same pid with another start time: a reused pid, not the owner
    store.connection.execute(
        "UPDATE runs SET owner_start_ticks = owner_start_ticks + 1 WHERE id = ?", (dead.run_id,)
    )
    statuses = {r.run_id: r.status for r in store.list_runs()}
    assert statuses == {alive.run_id: RunStatus.RUNNING, dead.run_id: RunStatus.INTERRUPTED}
    assert store.load_run(dead.run_id).status is RunStatus.INTERRUPTED
    dead.finish(RunStatus.INCOMPLETE)  # a finished run keeps its status
    assert store.load_run(dead.run_id).status is RunStatus.INCOMPLETE


def test_a_store_removed_under_a_run_is_saved_and_the_run_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perflab.records.errors import StoreLostError

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "folder" / "s.db"
    store = SqliteStore.open(path)
    earlier = store.begin_run(EXPERIMENT, {}, "0.1")
    earlier.finish(RunStatus.COMPLETE)
    writer = store.begin_run(EXPERIMENT, {}, "0.1")
    writer.add_sample(Sample("b", "A", Metric.TIME, "wall_ns", 1.0))
    path.unlink()
    with pytest.raises(StoreLostError, match="was removed while run 2") as caught:
        writer.add_sample(Sample("b", "A", Metric.TIME, "wall_ns", 2.0))
    recovery = tmp_path / "folder" / "perflab-recovered-run2.db"
    assert str(recovery) in caught.value.message
    with pytest.raises(StoreLostError):  # every later write says the same, nothing more
        writer.finish(RunStatus.COMPLETE)
    assert not (tmp_path / "folder" / "perflab-recovered-run2-2.db").exists()
    saved = SqliteStore.open(recovery, create=False)
    assert [(r.run_id, r.status, r.n_samples) for r in saved.list_runs()] == [
        (2, RunStatus.INCOMPLETE, 2),
        (1, RunStatus.COMPLETE, 0),
    ]


def test_the_store_folder_ignores_itself_for_git(tmp_path: Path) -> None:
    """The folder perflab makes for its store (the default `.perflab`) holds a `.gitignore` of
    `*`, so the store never shows in the user's `git status`; a folder the user had is left."""
    SqliteStore.open(tmp_path / ".perflab" / "perflab.db").close()
    assert (tmp_path / ".perflab" / ".gitignore").read_text().splitlines()[-1] == "*"
    SqliteStore.open(tmp_path / "mine.db").close()
    assert not (tmp_path / ".gitignore").exists()
    (tmp_path / "made").mkdir()
    SqliteStore.open(tmp_path / "made" / "new" / "p.db").close()
    assert (tmp_path / "made" / "new" / ".gitignore").exists()
    assert not (tmp_path / "made" / ".gitignore").exists()
