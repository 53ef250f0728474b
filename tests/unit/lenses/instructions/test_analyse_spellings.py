"""The function table of two builds that spell one function differently."""

from __future__ import annotations

from perflab.records.accounting import Presence
from tests.support.callgrind_texts import costs


def test_a_function_two_builds_spell_differently_is_one_row_saying_why() -> None:
    """Callgrind keeps a Rust hash where its demangler left the name half read (a `.llvm.`
    suffix): the two builds' hashes differ, the function is one row, named as in the baseline,
    with the variant's spelling and the reason in its JSON."""
    from perflab.lenses.instructions.analyse import function_table
    from perflab.lenses.instructions.counts import VariantCounts
    from perflab.lenses.instructions.details import function_json
    from perflab.lenses.instructions.pairing import respelled

    a, b = "spec_next::h680aaf5d04044e1f", "spec_next::h0123456789abcdef"
    base = VariantCounts((1.0,), {}, costs({a: 100, "main": 5}), None)
    other = respelled(base, VariantCounts((1.0,), {}, costs({b: 40, "main": 5}), None))
    rows, _ = function_table(base, other)
    (row,) = [r for r in rows if r.name != "main"]
    assert (row.name, row.presence, row.delta_self) == (a, Presence.BOTH, -60)
    spelled = function_json(row)["spelled_in_variant"]
    assert spelled["name"] == b and "the only function named spec_next" in spelled["why"]
    # two of one stem in a build: nothing is guessed, both stay apart
    two = respelled(base, VariantCounts((1.0,), {}, costs({b: 40, b[:-1] + "0": 1}), None))
    assert len(function_table(base, two)[0]) == 4


def test_the_inline_aware_table_is_paired_by_its_own_spellings() -> None:
    """Callgrind's demangler leaves out Rust's hash, the debug info's names keep it: each
    table is paired with its own kind, so neither makes the other look like two functions."""
    from perflab.lenses.instructions.analyse import function_table
    from perflab.lenses.instructions.counts import VariantCounts
    from perflab.lenses.instructions.pairing import respelled

    a, b = "sumbench::sum_slice::h5ce9dbc58b2415ea", "sumbench::sum_slice::h74f3f68197f7d97c"
    plain = "sumbench::sum_slice"
    base = VariantCounts((1.0,), {}, costs({plain: 100}), costs({a: 100}))
    other = respelled(base, VariantCounts((1.0,), {}, costs({plain: 40}), costs({b: 40})))
    rows, attribution = function_table(base, other)
    assert attribution == "inline-aware"
    assert [(r.name, r.presence) for r in rows] == [(a, Presence.BOTH)]
