"""Function deltas between two builds: sorted by the self change, clone parts and renamed
overloads paired."""

from __future__ import annotations

from perflab.lenses.instructions.explain import (
    function_deltas,
    unqualified_signature_base,
)
from perflab.records.accounting import Presence
from perflab.tool_output.callgrind import (
    FunctionId,
    function_parts,
    normalise_function_id,
)
from tests.support.callgrind_texts import costs

SUBJECT = "perflab.lenses.instructions.explain"


def test_deltas_are_sorted_by_absolute_self_delta_with_presence() -> None:
    before = costs({"main": 10, "kernel": 100, "gone": 3})
    after = costs({"main": 12, "kernel": 50, "new": 7})
    deltas = function_deltas(before, after)
    assert [(d.name, d.delta_self, d.presence) for d in deltas] == [
        ("kernel", -50.0, Presence.BOTH),
        ("new", 7.0, Presence.VARIANT_ONLY),
        ("gone", -3.0, Presence.BASELINE_ONLY),
        ("main", 2.0, Presence.BOTH),
    ]


def test_clone_parts_are_listed_and_overloads_whose_signature_changed_pair_up() -> None:
    after = costs({"kernel": 80, "kernel.cold": 5, "kernel'2": 1})
    parts = function_parts(after, normalise_function_id)
    assert parts == {FunctionId("kernel", "prog"): ("kernel", "kernel.cold")}
    before = costs({"at_add(long, long, long)": 100, "main": 5})
    changed = costs({"at_add(long, long)": 90, "main": 5})
    (row, _) = function_deltas(before, changed)
    assert (row.name, row.baseline_name, row.presence) == (
        "at_add(long, long)",
        "at_add(long, long, long)",
        Presence.BOTH,
    )
    assert row.delta_self == -10
    two = costs({"at_add(long, long)": 90, "at_add(int, int)": 1, "main": 5})
    assert len(function_deltas(before, two)) == 4  # ambiguous: no pairing
    assert unqualified_signature_base("ns::S::f(int) const &") == "ns::S::f"
    assert unqualified_signature_base("operator()(int)") == "operator()"
    assert unqualified_signature_base("main") is None
