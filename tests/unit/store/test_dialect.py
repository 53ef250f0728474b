"""The words each store's SQL differs by (store/dialect.py)."""

from __future__ import annotations

from perflab.store.dialect import POSTGRESQL, SQLITE


def test_each_dialect_says_its_own_words() -> None:
    assert SQLITE.marks(3) == "?, ?, ?" and POSTGRESQL.marks(2) == "%s, %s"
    assert "ON CONFLICT (run_id, variant) DO UPDATE" in POSTGRESQL.upsert_variant_info
    assert SQLITE.upsert_variant_info.startswith("INSERT OR REPLACE INTO variant_info")
