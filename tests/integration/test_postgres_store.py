"""The team store: a real PostgreSQL server (tests/integration/conftest.py), the same runs read
back as from SQLite, the CLI reading it, reuse per database. What every store does (the schema,
runs read back, many writers at once) is test_store_conformance.py's."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.api import make_experiment
from perflab.engine import run_experiment
from perflab.records.kinds import Metric, RunStatus
from perflab.records.run_facts import VariantInfo
from perflab.report.json_report import run_to_json
from perflab.store import SqliteStore, StoredRun, open_store
from perflab.store.postgres import shown
from tests.support import cli_commands, postgres_server
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration
psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (perflab[team])")


def copy_run(run: StoredRun, store: SqliteStore) -> int:
    """Write a stored run into another store, write by write as the engine does."""
    writer = store.begin_run(run.experiment, run.machine, run.perflab_version)
    for sample in run.samples:
        writer.add_sample(sample)
    for artifact in run.artifacts:
        writer.add_artifact(artifact)
    for note in run.notes:
        writer.add_note(note)
    for variant, info in run.variant_info.items():
        writer.add_variant_info(variant, VariantInfo.from_json(info))
    writer.finish(run.status, run.error)
    return writer.run_id


def _without_times(document: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in document.items() if k not in ("created_at", "finished_at")}


def test_a_run_read_back_from_postgresql_is_the_sqlite_runs_json(
    database: str, tmp_path: Path
) -> None:
    experiment = make_experiment(stmt="sum(range(200))", variants=["A", "B"])
    experiment = dataclasses.replace(
        experiment, settings=dataclasses.replace(FAST, metrics=(Metric.TIME,))
    )
    sqlite = SqliteStore.open(tmp_path / "s.db")
    measured = run_experiment(experiment, store=sqlite)
    stored = sqlite.load_run(measured.run_id)
    # the engine writes straight into PostgreSQL too (it reads its samples back while measuring)
    team = open_store(database)
    direct = run_experiment(experiment, store=team)
    assert direct.status is RunStatus.COMPLETE and direct.comparisons
    copied = team.load_run(copy_run(stored, team))
    assert copied.samples == stored.samples  # every value, NULL and 64-bit clock as written
    assert copied.artifacts == stored.artifacts and copied.notes == stored.notes
    assert copied.variant_info == stored.variant_info and copied.machine == stored.machine
    assert copied.experiment == stored.experiment
    from_sqlite = _without_times(run_to_json(analyse_run(stored), samples=True))
    from_postgresql = _without_times(run_to_json(analyse_run(copied), samples=True))
    assert from_postgresql == {**from_sqlite, "run_id": copied.run_id}
    assert [r.run_id for r in team.list_runs()] == [copied.run_id, direct.run_id]
    sqlite.close()
    team.close()


def test_the_cli_lists_shows_and_compares_a_postgresql_store(database: str) -> None:
    experiment = make_experiment(stmt="sum(range(50))", variants=["A", "B"])
    experiment = dataclasses.replace(
        experiment, settings=dataclasses.replace(FAST, metrics=(Metric.TIME,))
    )
    store = open_store(database)
    first = run_experiment(experiment, store=store).run_id
    second = copy_run(store.load_run(first), store)
    store.close()

    def perflab(*words: str) -> subprocess.CompletedProcess[str]:
        return cli_commands.perflab(*words, "--store", database, cwd=Path.cwd(), timeout_s=120)

    listed = perflab("list", "--json", "-")
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [second, first]
    shown_run = perflab("show", str(first), "--json", "-")
    assert shown_run.returncode == 0, shown_run.stderr
    assert json.loads(shown_run.stdout)["run_id"] == first
    compared = perflab("compare", str(first), str(second), "--json", "-")
    assert compared.returncode == 0, compared.stderr
    missing = perflab("show", "999")
    assert missing.returncode != 0
    assert "there is no run 999 in postgresql://" in " ".join(missing.stderr.split())
    assert "Traceback" not in missing.stderr


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://someone:secret@/perflab?host={tmp_path}"
    completed = cli_commands.perflab("list", "--store", url, cwd=tmp_path, timeout_s=60)
    assert completed.returncode != 0
    assert "cannot connect to the PostgreSQL store" in completed.stderr
    assert "secret" not in completed.stderr and "Traceback" not in completed.stderr
    assert shown(url) == f"postgresql://someone:***@/perflab?host={tmp_path}"


@pytest.mark.skipif(
    not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
    reason="needs valgrind, cc and git",
)
def test_history_reuses_only_what_each_postgresql_database_holds(
    postgresql: str, tmp_path: Path
) -> None:
    """Reuse reads the database itself: a second, empty database measures every commit again
    (nothing on this machine's disk speaks for a team store)."""
    from tests.support.merged_repo import BUILD, make_merged_repo

    repo = make_merged_repo(tmp_path / "repo")
    common = ["--cmd", "./prog", "--build", BUILD, "--cache-dir", str(tmp_path / "cache"),
              "--metric", "instructions", "--json", "-"]  # fmt: skip

    def history(store: str) -> dict[str, int]:
        done = cli_commands.perflab("history", "good..main~6", "--store", store, *common, cwd=repo)
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        return {"measured_now": document["measured_now"], "reused": document["reused"]}

    perf = postgres_server.new_database(postgresql)
    perf2 = postgres_server.new_database(postgresql)
    assert history(perf) == {"measured_now": 3, "reused": 0}  # good and two commits
    assert history(perf) == {"measured_now": 0, "reused": 3}
    assert history(perf2) == {"measured_now": 3, "reused": 0}
