"""A dispatch in numpy's copies as the asm lens explains it: one row with its widths, and only
under a selector."""

from __future__ import annotations

from perflab.lenses.asm.explain import explain
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.rows import VariantCode
from tests.support.asm_listings import XMM, YMM, ZMM, claims, listing
from tests.support.symbol_names import (
    AVX2_PARTITION,
    AVX2_SORT,
    DISABLED,
    NPY,
    OBJ,
    ZMM_PARTITION,
    ZMM_SORT,
)


def _code(*listings: FunctionListing) -> VariantCode:
    return VariantCode(tuple(listings), 1000.0, identities={OBJ: "build-id:ab"})


def _numpy_code(name: str, body: bytes) -> VariantCode:
    return _code(listing(name, body, 900.0, OBJ))


def test_asm_pairs_numpy_copies_under_a_selector_into_one_row_with_widths() -> None:
    base = _numpy_code("DOUBLE_add_X86_V3", YMM)
    new = _numpy_code("DOUBLE_add", XMM)
    rows = explain(base, new, DISABLED)
    assert len(rows) == 1
    [row] = rows
    assert sorted(claims(rows)) == [
        ("dispatch_changed", "DOUBLE_add_X86_V3"),
        ("vector_width_changed", "DOUBLE_add_X86_V3"),
    ]
    [dispatch] = [d for d in row.diagnoses if d.claim == "dispatch_changed"]
    assert any("NPY_DISABLE_CPU_FEATURES=X86_V3" in e for e in dispatch.evidence)
    assert any(NPY in e for e in dispatch.evidence)
    assert dispatch.detail["selected_by"] == list(DISABLED)
    assert "paired by dispatch" in row.paired_by
    assert not any("inlined" in note for note in row.notes)
    [width] = [d for d in row.diagnoses if d.claim == "vector_width_changed"]
    assert width.detail == {"from": 256, "to": 128}


def test_asm_makes_no_dispatch_without_a_selector_or_when_both_ran() -> None:
    base = _numpy_code("DOUBLE_add_X86_V3", YMM)
    new = _numpy_code("DOUBLE_add", XMM)
    rows = explain(base, new)
    assert len(rows) == 2
    assert all(c != "dispatch_changed" for c, _ in claims(rows))
    both = _code(listing("DOUBLE_add_X86_V3", YMM, 450.0, OBJ),
                 listing("DOUBLE_add", XMM, 450.0, OBJ))  # fmt: skip
    rows = explain(base, both, DISABLED)
    assert all(c != "dispatch_changed" for c, _ in claims(rows))


def test_asm_pairs_a_templates_zmm_and_avx2_instantiations_into_one_row() -> None:
    # np.sort with AVX-512 disabled: each kernel's avx2 instantiation ran in place of its zmm one
    base = _code(listing(ZMM_SORT, ZMM, 890.0, OBJ), listing(ZMM_PARTITION, ZMM, 870.0, OBJ))
    new = _code(listing(AVX2_SORT, YMM, 1450.0, OBJ), listing(AVX2_PARTITION, YMM, 1220.0, OBJ))
    rows = explain(base, new, DISABLED)
    assert len(rows) == 2
    assert (
        sorted(c for c, _ in claims(rows))
        == ["dispatch_changed"] * 2 + ["vector_width_changed"] * 2
    )
    sort = next(row for row in rows if "sort_n_vec" in row.name)
    assert sort.name.startswith("void sort_n_vec<zmm_vector<float>") and " -> " in sort.name
    assert "paired by template: one template instantiated for zmm -> avx2" in sort.paired_by
    [dispatch] = [d for d in sort.diagnoses if d.claim == "dispatch_changed"]
    assert dispatch.replacement is not None
    assert "avx2_vector" in dispatch.replacement.new and "zmm_vector" in dispatch.replacement.old
    assert any("one template instantiated for other vector types" in e for e in dispatch.evidence)
    [width] = [d for d in sort.diagnoses if d.claim == "vector_width_changed"]
    assert width.detail == {"from": 512, "to": 256}
    # without a selector the instantiations still pair: the template names the vector type
    assert len(explain(base, new)) == 2


def test_asm_never_pairs_instantiations_that_both_ran() -> None:
    base = _code(listing(ZMM_SORT, ZMM, 500.0, OBJ), listing(AVX2_SORT, YMM, 400.0, OBJ))
    new = _code(listing(AVX2_SORT, YMM, 900.0, OBJ))
    rows = explain(base, new, DISABLED)
    assert all(c != "dispatch_changed" for c, _ in claims(rows))
