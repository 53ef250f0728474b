"""Both stores satisfy the store protocol (store/protocol.py), each in its own dialect with no
SQL rewritten (no server here, tests/integration/test_postgres_store.py has one)."""

from __future__ import annotations

from pathlib import Path

from perflab.api import make_experiment
from perflab.records.kinds import RunStatus
from perflab.store import RunStore, SqliteStore
from perflab.store.postgres import PostgresStore
from perflab.store.protocol import RunRecorder, RunSink
from perflab.store.tables import SqlRunWriter

STORE_PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab" / "store"


def test_both_stores_satisfy_the_store_protocol(tmp_path: Path) -> None:
    """The SQLite store is checked on an instance; the PostgreSQL store (no server here) by its
    class's members, and by mypy where open_store returns either as a RunStore."""
    store = SqliteStore.open(tmp_path / "perflab.db")
    try:
        assert isinstance(store, RunStore) and isinstance(store, RunRecorder)
        writer = store.begin_run(make_experiment(stmt="pass"), {}, "test")
        assert isinstance(writer, RunSink) and isinstance(writer, SqlRunWriter)
        writer.finish(RunStatus.COMPLETE)
        assert store.load_run("latest").status is RunStatus.COMPLETE
    finally:
        store.close()
    members = ("begin_run", "resolve_run_id", "run_ids", "list_runs", "runs_of_code", "load_run")
    assert all(callable(getattr(PostgresStore, name)) for name in (*members, "close"))
    typed: type[RunStore] = PostgresStore  # checked by mypy
    assert typed is PostgresStore


def test_no_casts_and_no_sql_rewritten_in_the_store() -> None:
    """Each store speaks its dialect: nothing is cast to the other's types, no SQL translated."""
    for module in STORE_PACKAGE.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "cast(" not in text, module.name
        assert "re.sub(" not in text and '.replace("?"' not in text, module.name
