"""Pairing functions that ran in one variant only with the one that ran in the other instead:
each pairing's own pair, and the cases that must stay two rows (both ran, a shared stem, no
evidence beyond a name)."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.code_diff import compare_functions
from perflab.lenses.asm.identity import identity
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.pairings import (
    cold_callers,
    cpu_copies,
    cpu_word,
    isa_changes,
    pair_by_call_site,
    variant_changes,
    vector_instances,
)
from perflab.lenses.asm.rows import Row, VariantCode, group_families, side_of
from tests.support.asm_listings import XMM, YMM, ZMM, claims, listing
from tests.support.symbol_names import AVX2_SORT, DISABLED, OBJ, ZMM_SORT

TORCH = "/lib/libtorch_cpu.so"
BLAS = "/lib/libopenblas.so"
IDS = {OBJ: "build-id:ab", TORCH: "build-id:ab12", BLAS: "build-id:cd"}


def _code(*listings: FunctionListing, **kw: object) -> VariantCode:
    return VariantCode(tuple(listings), 1000.0, identities=kw.pop("identities", IDS), **kw)  # type: ignore[arg-type]


def _rows(baseline: VariantCode, variant: VariantCode) -> list[Row]:
    """One row per family either variant listed, hottest first, without claims (as `explain`
    builds them before pairing)."""
    left, right = group_families(baseline), group_families(variant)
    rows = []
    for name in dict.fromkeys([*left, *right]):
        b = side_of(baseline, name, left.get(name, []))
        v = side_of(variant, name, right.get(name, []))
        change = compare_functions(
            identity(name), b.primary if b.ran else None, v.primary if v.ran else None
        )
        rows.append(Row(name=name, baseline=b, variant=v, change=change))
    rows.sort(key=lambda row: -row.hotness)
    return rows


def _names(rows: list[Row]) -> list[str]:
    return [row.name for row in rows]


# ---- isa_changes: one ATen dispatch family's members for two ISAs, in one object


def test_isa_changes_pairs_two_isas_members_in_one_object() -> None:
    old = "at::native::DEFAULT::vectorized_loop<add>(char**)"
    new = "callback_fn<at::native::AVX2::VectorizedLoop2d<add>>(char**)"
    base, var = _code(listing(old, XMM, 880.0, TORCH)), _code(listing(new, YMM, 740.0, TORCH))
    rows = _rows(base, var)
    explained: set[str] = set()
    [row] = isa_changes(rows, base, var, explained)
    assert sorted(c for c, _ in claims([row])) == ["dispatch_changed", "vector_width_changed"]
    assert row.paired_by == "paired by dispatch: DEFAULT -> AVX2 in libtorch_cpu.so"
    assert explained == set(_names(rows))


@pytest.mark.parametrize(
    ("variant_ids", "new_name"),
    [
        ({TORCH: "build-id:other"}, "at::native::AVX2::k(float)"),  # another build
        ({}, "at::native::AVX2::k(float)"),  # no identity to compare
        (IDS, "at::native::DEFAULT::k2(float)"),  # the same ISA on both sides
        (IDS, "plain_kernel(float)"),  # not a dispatch member
    ],
    ids=["other-build", "no-identity", "same-isa", "not-a-member"],
)
def test_isa_changes_does_not_pair_without_one_object_and_two_isas(
    variant_ids: dict[str, str], new_name: str
) -> None:
    base = _code(listing("at::native::DEFAULT::k(float)", XMM, 880.0, TORCH))
    var = _code(listing(new_name, YMM, 740.0, TORCH), identities=variant_ids)
    rows = _rows(base, var)
    assert isa_changes(rows, base, var, set()) == rows


# ---- cpu_copies: a function's copies for two CPUs, under a selector change


def test_cpu_copies_pairs_a_suffixed_copy_with_the_other_under_a_selector() -> None:
    base = _code(listing("DOUBLE_add_X86_V3", YMM, 900.0, OBJ))
    var = _code(listing("DOUBLE_add", XMM, 900.0, OBJ))
    rows = _rows(base, var)
    explained: set[str] = set()
    [row] = cpu_copies(rows, base, var, explained, DISABLED)
    assert row.name == "DOUBLE_add_X86_V3 -> DOUBLE_add"
    assert sorted(claims([row])) == [
        ("dispatch_changed", "DOUBLE_add_X86_V3"),
        ("vector_width_changed", "DOUBLE_add_X86_V3"),
    ]
    assert row.paired_by.startswith("paired by dispatch: X86_V3 -> unsuffixed copies of DOUBLE_add")
    [dispatch] = [d for d in row.diagnoses if d.claim == "dispatch_changed"]
    assert dispatch.detail["selected_by"] == list(DISABLED)
    assert explained == {"DOUBLE_add_X86_V3", "DOUBLE_add"}


def _both(*names: str) -> VariantCode:
    return _code(*(listing(n, YMM, 450.0, OBJ) for n in names))


@pytest.mark.parametrize(
    ("base", "var", "selectors"),
    [
        # a suffix list alone: no selector differs between the variants
        (_both("DOUBLE_add_X86_V3"), _both("DOUBLE_add"), ()),
        # both ran in the variant: the baseline's copy did not give way to the other
        (_both("DOUBLE_add_X86_V3"), _both("DOUBLE_add_X86_V3", "DOUBLE_add"), DISABLED),
        # a stem shared by functions that both ran on both sides
        (
            _both("DOUBLE_add_X86_V3", "DOUBLE_add"),
            _both("DOUBLE_add_X86_V3", "DOUBLE_add"),
            DISABLED,
        ),
    ],
    ids=["suffix-list-alone", "both-ran-in-variant", "shared-stem-both-ran"],
)
def test_cpu_copies_does_not_pair(
    base: VariantCode, var: VariantCode, selectors: tuple[str, ...]
) -> None:
    rows = _rows(base, var)
    out = cpu_copies(rows, base, var, set(), selectors)
    assert out == rows
    assert "dispatch_changed" not in [c for c, _ in claims(out)]


@pytest.mark.parametrize(
    ("name", "word"),
    [("DOUBLE_add_X86_V3", "X86_V3"), ("DOUBLE_add", "unsuffixed")],
)
def test_cpu_word_names_a_copys_cpu(name: str, word: str) -> None:
    assert cpu_word(name) == word


# ---- vector_instances: one template's instantiations for two vector types


def test_vector_instances_pairs_a_templates_two_vector_types() -> None:
    base = _code(listing(ZMM_SORT, ZMM, 900.0, OBJ))
    var = _code(listing(AVX2_SORT, YMM, 900.0, OBJ))
    rows = _rows(base, var)
    explained: set[str] = set()
    [row] = vector_instances(rows, base, var, explained, DISABLED)
    assert ("dispatch_changed", rows[0].name) in claims([row])
    assert row.paired_by.startswith("paired by template: one template instantiated for ")
    assert len(explained) == 2


def test_vector_instances_does_not_pair_when_both_ran() -> None:
    base = _code(listing(ZMM_SORT, ZMM, 450.0, OBJ), listing(AVX2_SORT, YMM, 450.0, OBJ))
    var = _code(listing(AVX2_SORT, YMM, 900.0, OBJ))
    rows = _rows(base, var)
    assert vector_instances(rows, base, var, set(), DISABLED) == rows


# ---- variant_changes: names one word apart in one object, one word for every pair


def test_variant_changes_pairs_names_one_word_apart_in_one_object() -> None:
    base = _code(
        listing("dgemm_kernel_SKYLAKEX", ZMM, 600.0, BLAS),
        listing("dgemm_oncopy_SKYLAKEX", ZMM, 300.0, BLAS),
    )
    var = _code(
        listing("dgemm_kernel_HASWELL", YMM, 600.0, BLAS),
        listing("dgemm_oncopy_HASWELL", YMM, 300.0, BLAS),
    )
    out = variant_changes(_rows(base, var), base, var, set())
    assert sorted(_names(out)) == [
        "dgemm_kernel_SKYLAKEX -> dgemm_kernel_HASWELL",
        "dgemm_oncopy_SKYLAKEX -> dgemm_oncopy_HASWELL",
    ]
    assert all(r.paired_by == "paired by object and name: SKYLAKEX -> HASWELL in libopenblas.so"
               for r in out)  # fmt: skip
    assert all(c == "dispatch_changed" for c, _ in claims(out) if c != "vector_width_changed")


@pytest.mark.parametrize(
    ("new_names", "variant_ids"),
    [
        (("dgemm_kernel_HASWELL", "dgemm_oncopy_ZEN"), IDS),  # two different words
        (("dgemm_kernel_HASWELL", "dgemm_oncopy_HASWELL"), {BLAS: "build-id:other"}),
    ],
    ids=["words-disagree", "other-build"],
)
def test_variant_changes_does_not_pair(
    new_names: tuple[str, str], variant_ids: dict[str, str]
) -> None:
    base = _code(
        listing("dgemm_kernel_SKYLAKEX", ZMM, 600.0, BLAS),
        listing("dgemm_oncopy_SKYLAKEX", ZMM, 300.0, BLAS),
    )
    var = _code(
        listing(new_names[0], YMM, 600.0, BLAS),
        listing(new_names[1], YMM, 300.0, BLAS),
        identities=variant_ids,
    )
    rows = _rows(base, var)
    assert variant_changes(rows, base, var, set()) == rows


# ---- cold_callers and pair_by_call_site: one caller calls one callee in place of another


def _renamed_callee(*, both_ran: bool = False) -> tuple[VariantCode, VariantCode]:
    extra = [listing("compute_v2", YMM, 450.0)] if both_ran else []
    base = _code(listing("compute_v1", YMM, 900.0), *extra, call_sites={"driver": ("compute_v1",)})
    var = _code(listing("compute_v2", YMM, 900.0), call_sites={"driver": ("compute_v2",)})
    return base, var


def test_cold_callers_says_the_callee_changed_and_call_site_pairs_the_rows() -> None:
    base, var = _renamed_callee()
    rows = cold_callers(_rows(base, var), base, var, set())
    assert ("callee_changed", "driver") in claims(rows)
    [d] = [d for r in rows for d in r.diagnoses]
    assert d.detail == {"from": "compute_v1", "to": "compute_v2"}
    [row] = pair_by_call_site(rows)
    assert row.name == "compute_v1 -> compute_v2"
    assert row.paired_by.startswith("paired by call site: ")
    assert row.paired_by.endswith("calls compute_v1 in the baseline and compute_v2 in the variant")


def test_pair_by_call_site_names_a_cold_caller() -> None:
    # a caller without a row of its own: the claim's function, not the row that carries it
    base, var = _renamed_callee()
    [row] = pair_by_call_site(cold_callers(_rows(base, var), base, var, set()))
    assert row.paired_by.startswith("paired by call site: driver calls compute_v1")


def test_cold_callers_makes_no_claim_when_the_new_callee_ran_in_both() -> None:
    base, var = _renamed_callee(both_ran=True)
    rows = _rows(base, var)
    out = cold_callers(rows, base, var, set())
    assert out == rows
    assert pair_by_call_site(out) == rows


def test_pair_by_call_site_leaves_rows_without_a_callee_claim() -> None:
    base, var = _renamed_callee()
    rows = _rows(base, var)
    assert sorted(_names(pair_by_call_site(rows))) == ["compute_v1", "compute_v2"]
