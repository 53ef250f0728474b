"""Both stores are typed as the store protocol (store/protocol.py), each in its own dialect with
no SQL rewritten (no server here: tests/integration/test_store_conformance.py runs one set of
behaviours against both)."""

from __future__ import annotations

from pathlib import Path

from perflab.store import RunStore, SqliteStore
from perflab.store.postgres import PostgresStore
from perflab.store.protocol import RunRecorder

STORE_PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab" / "store"


def test_both_stores_are_typed_as_the_store_protocol() -> None:
    """open_store returns either as a RunStore, so mypy checks both classes against the protocol;
    what they do is checked on live instances of both by test_store_conformance.py."""
    typed: tuple[type[RunStore], ...] = (SqliteStore, PostgresStore)
    assert all(issubclass(cls, RunRecorder) for cls in typed)


def test_no_casts_and_no_sql_rewritten_in_the_store() -> None:
    """Each store speaks its dialect: nothing is cast to the other's types, no SQL translated."""
    for module in STORE_PACKAGE.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "cast(" not in text, module.name
        assert "re.sub(" not in text and '.replace("?"' not in text, module.name
