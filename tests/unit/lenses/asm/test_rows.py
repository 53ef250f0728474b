"""One row of the asm comparison (lenses/asm/rows.py): which member of a family a variant
executed, why a side did not run, and what a side and a row say of themselves."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.code_diff import compare_functions
from perflab.lenses.asm.rows import (
    MIN_RAN_SAMPLES,
    Row,
    Side,
    group_families,
    samples_text,
    side_of,
)
from perflab.records.diagnosis import Claim, Diagnosis
from tests.support.asm_listings import XMM, YMM, code, listing

CALL = bytes.fromhex("e8fb0f0000c3")  # call 0x2000 (Sleef_expf8_u10, from 0x1000); ret
AVX2, DEFAULT = "at::native::AVX2::k(float)", "at::native::DEFAULT::k(float)"
KERNEL = "at::native::CPU_CAPABILITY::k(float)"  # their family


def test_a_family_holds_its_fragments_clones_and_dispatch_members() -> None:
    f, cold, clone = listing("f", samples=5.0), listing("f.cold"), listing("f.constprop.0")
    avx2, default = listing(AVX2), listing(DEFAULT)
    groups = group_families(code(f, avx2, cold, default, clone))
    assert groups == {"f": [f, cold, clone], KERNEL: [avx2, default]}


def test_the_side_that_ran_is_its_hottest_whole_member_the_rest_its_parts() -> None:
    cold, f = listing("f.cold", samples=400.0), listing("f", samples=100.0)
    clone = listing("f.constprop.0", samples=50.0)
    side = side_of(code(cold, f, clone), "f", [cold, f, clone])
    assert side.ran and side.primary is f and not side.why_not  # a fragment is never primary
    assert side.parts == (cold, clone)
    assert (side.samples, side.share, side.total) == (550.0, pytest.approx(0.55), 1000.0)
    # its size is the function's with its split-off parts
    assert side.size_bytes == f.size_bytes + cold.size_bytes + clone.size_bytes


def test_a_family_s_samples_are_at_least_those_the_profile_gave_it() -> None:
    f = listing("f", samples=10.0)
    side = side_of(code(f, family_samples={"f": 30.0}), "f", [f])
    assert side.samples == 30.0 and side.ran


def test_a_dispatch_member_that_ran_too_is_a_part_but_not_the_function_s_own() -> None:
    avx2, default = listing(AVX2, YMM, 100.0), listing(DEFAULT, XMM, 20.0)
    side = side_of(code(avx2, default), KERNEL, [avx2, default])
    assert side.primary is avx2 and side.parts == (default,)
    assert side.size_bytes == avx2.size_bytes
    assert [p["role"] for p in side.parts_json()] == ["dispatch member"]
    assert side.parts_json()[0]["cost_share"] == pytest.approx(0.02)


def test_a_function_s_calls_include_its_split_off_parts_but_not_other_members() -> None:
    f, cold = listing("f", CALL, 100.0), listing("f.cold", CALL)
    member = listing(AVX2, CALL)
    side = Side(primary=f, parts=(cold, member), samples=100.0, share=0.1, total=1000.0, ran=True)
    assert side.calls == {"Sleef_expf8_u10": 2}
    assert [p["role"] for p in side.parts_json()] == ["fragment", "dispatch member"]


@pytest.mark.parametrize(
    ("samples", "total"),
    [(MIN_RAN_SAMPLES - 1, 100.0), (20.0, 10_000.0)],  # too few samples; below 1% of them
)
def test_a_side_below_the_minimum_did_not_run(samples: float, total: float) -> None:
    f = listing("f", samples=samples)
    side = side_of(code(f, total=total), "f", [f])
    assert side.primary is None and not side.ran and side.parts == ()
    assert side.why_not.startswith(f"ran below the minimum ({int(samples)} of {int(total)}")
    assert side.to_json() is None and side.size_bytes == 0 and not side.calls


def test_a_named_function_is_listed_even_where_it_did_not_run() -> None:
    f = listing("f", samples=1.0)
    side = side_of(code(f, named=True), "f", [f])
    assert side.primary is f and not side.ran and "below the minimum" in side.why_not
    shown = side.to_json()
    assert shown is not None and shown["ran"] is False and shown["own_size_bytes"] == f.size_bytes


def test_a_side_not_sampled_says_what_the_symbol_table_says_of_it() -> None:
    assert side_of(code(), "g", []).why_not == "not sampled (0 of 1000 samples)"
    defined = side_of(code(defined={"g": ("g in libk.so",)}), "g", [])
    assert defined.why_not.endswith("; defined as g in libk.so per the symbol table")
    searched = tuple(f"/lib/{k}.so" for k in "abcde")
    absent = side_of(code(searched={"g": searched}), "g", [])
    assert absent.why_not.endswith("; not defined in a.so, b.so, c.so and 2 more objects it loaded")


def _side(primary: str | None, share: float, code_bytes: bytes = YMM) -> Side:
    shown = listing(primary, code_bytes, share * 1000) if primary else None
    why = "" if primary else "not sampled (0 of 1000 samples)"
    return Side(
        primary=shown,
        parts=(),
        samples=share * 1000,
        share=share,
        total=1000.0,
        ran=primary is not None,
        why_not=why,
    )


def _row(baseline: Side, variant: Side, *diagnoses: Diagnosis, paired_by: str = "") -> Row:
    change = compare_functions("k", baseline.primary, variant.primary)
    return Row(
        name="k",
        baseline=baseline,
        variant=variant,
        change=change,
        diagnoses=diagnoses,
        paired_by=paired_by,
    )


def test_a_row_is_as_hot_as_its_hotter_side() -> None:
    assert _row(_side("f", 0.2), _side("f", 0.5)).hotness == 0.5


def test_a_row_says_why_a_side_did_not_run() -> None:
    row = _row(_side(None, 0.0), _side("f", 0.5))
    assert row.sentence == "baseline: not sampled (0 of 1000 samples)"


def test_a_row_says_how_the_code_changed_and_which_member_ran() -> None:
    assert _row(_side("f", 0.2), _side("f", 0.2)).sentence == "identical after normalisation"
    dispatch = Diagnosis(Claim.DISPATCH_CHANGED, "k", ())
    row = _row(_side(AVX2, 0.2), _side(DEFAULT, 0.2, XMM), dispatch, paired_by="paired by dispatch")
    words = row.sentence.split("; ")
    assert words[:2] == ["paired by dispatch", f"ran {AVX2} -> {DEFAULT}"]
    assert "128-bit registers (baseline 256)" in words[2]


def test_samples_are_said_with_their_share_or_not_at_all() -> None:
    assert samples_text(25.0, 1000.0) == "25 of 1000 samples, 2.5%"
    assert samples_text(25.0, 0.0) == "?"
