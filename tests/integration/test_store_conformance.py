"""One set of behaviours every store passes (store.protocol's RunStore), run against each backend:
SQLite on a file, PostgreSQL on a real server (tests/integration/conftest.py). A new backend
joins by adding one entry to BACKENDS; what a backend does beyond the protocol (a damaged file,
another application's database) stays in its own tests."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.records.errors import StoreError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Sample, Severity, Variant
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.store import RunStore, StoreKind, StoreLocation, location_facts, open_store
from perflab.store.migrations import SCHEMA_VERSION
from tests.support import postgres_server

pytestmark = pytest.mark.integration

TIME, RSS = Metric.TIME, Metric("rss")
EXPERIMENT = Experiment(
    benchmarks=(Benchmark("b", stmt="pass", params={"n": "1"}),),
    variants=(Variant("A"), Variant("B", env={"X": "1"}, python="/usr/bin/python3")),
)
# a commit's provenance as the git workflows write it into a variant's facts
COMMIT = {"ref": "main", "commit": "c" * 40, "tree": "t", "build": None, "changes": []}


@dataclass(frozen=True)
class Backend:
    """A store backend as the suite drives it: new, empty locations, and the schema version
    read and set behind the store's back."""

    kind: StoreKind
    new_location: Callable[[], StoreLocation]
    schema_version: Callable[[StoreLocation], int | None]
    set_schema_version: Callable[[StoreLocation, int], None]


def _sqlite_version(location: StoreLocation) -> int | None:
    if not Path(location).exists():
        return None
    with sqlite3.connect(location) as connection:
        return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _set_sqlite_version(location: StoreLocation, version: int) -> None:
    connection = sqlite3.connect(location)
    connection.execute(f"PRAGMA user_version = {version}")
    connection.close()


def _postgresql_version(location: StoreLocation) -> int | None:
    import psycopg

    with psycopg.connect(str(location), autocommit=True) as connection:
        row = connection.execute("SELECT to_regclass('perflab_schema')").fetchone()
        if row is None or row[0] is None:
            return None
        row = connection.execute("SELECT version FROM perflab_schema").fetchone()
        return int(row[0]) if row else 0


def _set_postgresql_version(location: StoreLocation, version: int) -> None:
    import psycopg

    with psycopg.connect(str(location), autocommit=True) as connection:
        connection.execute("UPDATE perflab_schema SET version = %s", (version,))


BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "postgresql":
        server: str = request.getfixturevalue("postgresql")
        return Backend(
            StoreKind.POSTGRESQL,
            lambda: postgres_server.new_database(server),
            _postgresql_version,
            _set_postgresql_version,
        )
    files = iter(tmp_path / f"store{n}" / "perflab.db" for n in range(1_000))
    return Backend(StoreKind.SQLITE, lambda: next(files), _sqlite_version, _set_sqlite_version)


@pytest.fixture
def location(backend: Backend) -> StoreLocation:
    return backend.new_location()


@pytest.fixture
def store(location: StoreLocation) -> Iterator[RunStore]:
    opened = open_store(location)
    yield opened
    opened.close()


def _sample(metric: Metric, value: float, benchmark: str = "b") -> Sample:
    return Sample(benchmark, "A", metric, "wall_ns", value)


# ---- opening: the schema made once, at its current version; reading makes nothing


def test_a_new_store_is_made_at_the_current_schema_and_reopened_as_it_is(
    backend: Backend, location: StoreLocation
) -> None:
    store = open_store(location)
    assert isinstance(store, RunStore) and not store.read_only
    assert backend.schema_version(location) == SCHEMA_VERSION
    assert store.list_runs() == [] and store.run_ids() == [] and store.runs_of_code() == []
    with pytest.raises(StoreError, match="the store is empty"):
        store.resolve_run_id("latest")
    run_id = store.begin_run(EXPERIMENT, MachineInfo(), "0.test").run_id
    store.close()
    again = open_store(location)  # nothing left to migrate: the run is kept
    assert backend.schema_version(location) == SCHEMA_VERSION
    assert again.run_ids() == [run_id]
    again.close()


def test_reading_where_no_store_is_refuses_and_makes_nothing(
    backend: Backend, location: StoreLocation
) -> None:
    with pytest.raises(StoreError, match="no perflab store"):
        open_store(location, create=False)
    assert backend.schema_version(location) is None


def test_a_store_opened_for_reading_writes_no_run(store: RunStore, location: StoreLocation) -> None:
    store.begin_run(EXPERIMENT, MachineInfo(), "0.test").finish(RunStatus.COMPLETE)
    reader = open_store(location, create=False)
    assert reader.read_only and len(reader.list_runs()) == 1
    with pytest.raises(StoreError, match="opened for reading"):
        reader.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    reader.close()


def test_a_store_newer_than_this_perflab_is_refused(
    backend: Backend, location: StoreLocation
) -> None:
    open_store(location).close()
    backend.set_schema_version(location, SCHEMA_VERSION + 1)
    for create in (True, False):
        with pytest.raises(StoreError, match="newer than this perflab"):
            open_store(location, create=create)


def test_the_location_facts_name_the_backend_and_where_runs_are_read(
    backend: Backend, location: StoreLocation
) -> None:
    facts = location_facts(location)
    assert facts.kind is backend.kind
    with closing(open_store(location)) as store:
        run_id = store.begin_run(EXPERIMENT, MachineInfo(), "0.test").run_id
    facts = location_facts(location)
    assert facts.exists
    with closing(open_store(location, create=facts.create_to_read)) as reader:
        assert reader.run_ids() == [run_id]


# ---- a run: written as measured, read back whole


def test_a_run_reads_back_as_it_was_written(store: RunStore, location: StoreLocation) -> None:
    writer = store.begin_run(EXPERIMENT, MachineInfo(cpu_model="x", cores=8), "0.test")
    # every field, a 64-bit clock, NULLs where a lens accounts nothing
    full = Sample("b", "A", TIME, "wall_ns", 5.0, loops=10, generation=1, block=2, position=1,
                  cpu=3, at_ns=2**62 + 7, warmup=True, run_queue_ns=4, cpu_ns=3,
                  involuntary_switches=1)  # fmt: skip
    bare = Sample("b", "B", TIME, "wall_ns", 9e6)
    writer.add_sample(full)
    writer.add_sample(bare)
    artifact = Artifact("b", "A", Metric.INSTRUCTIONS, "callgrind.out", "data", generation=2)
    writer.add_artifact(artifact)
    note = Note(Severity.WARNING, "noisy", hint="close it", benchmark="b", metric=TIME)
    writer.add_note(note)
    writer.add_note(Note(Severity.INFO, "said once"))
    writer.add_variant_info(
        "A", VariantInfo.from_json({"python": "3.12", "time": {"b": {"loops": 10}}})
    )
    writer.add_variant_info(
        "A", VariantInfo.from_json({"python": "3.13", "time": {"c": {"loops": 20}}})
    )
    writer.finish(RunStatus.INCOMPLETE, "it broke")

    with closing(open_store(location, create=False)) as reader:
        run = reader.load_run(writer.run_id)
        listed = reader.list_runs()
    assert run.experiment == EXPERIMENT and run.machine.to_json() == {"cpu_model": "x", "cores": 8}
    assert run.samples == (full, bare) and run.samples[0].per_iteration == 0.5
    assert run.artifacts == (artifact,)
    assert run.notes == (note, Note(Severity.INFO, "said once"))
    assert run.variant_info == {
        "A": {"python": "3.13", "time": {"b": {"loops": 10}, "c": {"loops": 20}}}
    }
    assert (run.status, run.error, run.perflab_version) == (
        RunStatus.INCOMPLETE,
        "it broke",
        "0.test",
    )
    assert run.finished_at is not None
    assert [(r.run_id, r.n_samples, r.status) for r in listed] == [
        (writer.run_id, 2, RunStatus.INCOMPLETE)
    ]


def test_a_run_read_for_some_metrics_holds_only_theirs(store: RunStore) -> None:
    writer = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    writer.add_sample(_sample(TIME, 1.0))
    writer.add_sample(_sample(RSS, 2.0))
    writer.add_artifact(Artifact("b", "A", RSS, "k", "c"))
    writer.finish(RunStatus.COMPLETE)
    some = store.load_run(writer.run_id, metrics=[RSS])
    assert [s.metric for s in some.samples] == [RSS] and len(some.artifacts) == 1
    nothing = store.load_run(writer.run_id, metrics=[])
    assert nothing.samples == () and nothing.artifacts == ()
    assert len(store.load_run(writer.run_id).samples) == 2


def test_a_run_reads_its_own_samples_so_far(store: RunStore) -> None:
    writer = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    writer.add_sample(_sample(TIME, 1.0))
    writer.add_sample(_sample(RSS, 2.0))
    writer.add_sample(_sample(TIME, 3.0, benchmark="other"))
    other = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    other.add_sample(_sample(TIME, 7.0))
    assert [s.value for s in writer.data_for("b", TIME).samples] == [1.0]
    assert [s.value for s in other.data_for("b", TIME).samples] == [7.0]


def test_a_renamed_benchmark_is_renamed_in_everything_the_run_stored(store: RunStore) -> None:
    writer = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    writer.add_sample(_sample(TIME, 1.0))
    writer.add_artifact(Artifact("b", "A", TIME, "k", "c"))
    writer.add_note(Note(Severity.INFO, "n", benchmark="b"))
    writer.rename_benchmark("b", "b[1]")
    run = store.load_run(writer.run_id)
    assert {s.benchmark for s in run.samples} | {a.benchmark for a in run.artifacts} == {"b[1]"}
    assert run.notes[0].benchmark == "b[1]"


# ---- many runs: references, the list, the runs of code, writers at once


def test_run_references(store: RunStore) -> None:
    ids = [store.begin_run(EXPERIMENT, MachineInfo(), "0.test").run_id for _ in range(3)]
    assert store.run_ids() == ids
    assert store.resolve_run_id("latest") == store.resolve_run_id(" last ") == ids[-1]
    assert store.resolve_run_id(-2) == ids[1] and store.resolve_run_id(str(ids[0])) == ids[0]
    for missing in (ids[-1] + 1, 2**63, -(2**63)):
        with pytest.raises(StoreError, match="there is no run"):
            store.resolve_run_id(missing)
    with pytest.raises(StoreError, match="there is no such run in the store"):
        store.resolve_run_id(-4)
    with pytest.raises(StoreError, match="'first' is not a run id"):
        store.resolve_run_id("first")
    with pytest.raises(StoreError, match="there is no run"):
        store.load_run(ids[-1] + 1)


def test_the_list_is_newest_first_with_its_sample_counts(store: RunStore) -> None:
    first = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    second = store.begin_run(EXPERIMENT, MachineInfo(), "0.test")
    first.add_sample(_sample(TIME, 1.0))
    first.finish(RunStatus.COMPLETE)
    listed = store.list_runs()
    assert [(r.run_id, r.n_samples) for r in listed] == [(second.run_id, 0), (first.run_id, 1)]
    assert listed[1].status is RunStatus.COMPLETE
    assert listed[0].status is RunStatus.RUNNING  # its process, this one, is alive
    assert [r.run_id for r in store.list_runs(limit=1)] == [second.run_id]


def test_the_runs_of_code_are_those_with_a_commit_oldest_first(store: RunStore) -> None:
    plain, first, second = (store.begin_run(EXPERIMENT, MachineInfo(), "0.test") for _ in range(3))
    plain.add_variant_info(
        "A", VariantInfo.from_json({"provenance": {"ref": "main"}})
    )  # no commit: not code
    second.add_variant_info("A", VariantInfo.from_json({"provenance": COMMIT}))
    first.add_variant_info("B", VariantInfo.from_json({"provenance": {**COMMIT, "extra": 1}}))
    assert [(r.run_id, list(r.provenance)) for r in store.runs_of_code()] == [
        (first.run_id, ["B"]),
        (second.run_id, ["A"]),
    ]
    (listed,) = [r for r in store.list_runs() if r.run_id == first.run_id]
    assert listed.provenance == {"B": COMMIT}  # the listing keeps the provenance's own fields


def _write_one_run(location: StoreLocation, writer_number: int, n_samples: int) -> int:
    store = open_store(location)  # every writer opens a new store at once: one makes it
    writer = store.begin_run(make_experiment(stmt="pass", variants=["A", "B"]),
                             MachineInfo.from_json({"writer": writer_number}), "test")  # fmt: skip
    for i in range(n_samples):
        writer.add_sample(
            Sample(
                benchmark="pass", variant="AB"[i % 2], metric=TIME, name="wall",
                value=float(writer_number * 1000 + i), loops=1, generation=i // 10,
                block=i % 10, position=i % 2, cpu=0, at_ns=2**62 + i, warmup=False,
            )
        )  # fmt: skip
        if i % 25 == 0:
            writer.add_variant_info("A", VariantInfo.from_json({"seen": i}))
    writer.add_note(Note(Severity.INFO, f"writer {writer_number}"))
    writer.finish(RunStatus.COMPLETE)
    store.close()
    return writer.run_id


def test_many_writers_at_once(location: StoreLocation) -> None:
    writers, n_samples = 4, 120
    context = multiprocessing.get_context("spawn")  # separate processes, as CI machines are
    with context.Pool(writers) as pool:
        run_ids = pool.starmap(_write_one_run, [(location, w, n_samples) for w in range(writers)])
    assert len(set(run_ids)) == writers
    with closing(open_store(location, create=False)) as store:
        for run_id in run_ids:
            run = store.load_run(run_id)
            writer_number = run.machine["writer"]
            assert run.status is RunStatus.COMPLETE
            # each run holds its own writes only, in the order written
            assert [s.value for s in run.samples] == [
                float(writer_number * 1000 + i) for i in range(n_samples)
            ]
            assert run.variant_info == {"A": {"seen": 100}}
            assert [n.message for n in run.notes] == [f"writer {writer_number}"]
