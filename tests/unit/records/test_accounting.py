"""A function row's presence reads back from a comparison's JSON as the `Presence` written, and
a row naming none this perflab knows reads as run in both (records/accounting.py)."""

from __future__ import annotations

from perflab.records.accounting import Presence


def test_a_presence_reads_back_from_its_stored_string() -> None:
    assert [p.value for p in Presence] == ["both", "baseline_only", "variant_only"]
    assert all(Presence.read(str(p)) is p for p in Presence)


def test_a_row_naming_no_known_presence_ran_in_both() -> None:
    assert Presence.read(None) is Presence.BOTH
    assert Presence.read("sometimes") is Presence.BOTH
