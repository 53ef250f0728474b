"""A dispatch claimed by evidence in a library that picks its CPU copies through its own tables
(numpy, OpenBLAS, ATen): copies of one stem in one object, each the only one that ran in its
variant, and the variants differ in what selects them. Synthetic profile and asm inputs."""

from __future__ import annotations

from collections import Counter

from perflab.lenses.asm.explain import explain
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.rows import VariantCode
from perflab.lenses.instructions.pairing import name_pairing
from perflab.lenses.profile.analyse import ProfileDetails
from perflab.tool_output.callgrind import FunctionCost, FunctionCosts, FunctionId
from perflab.tool_output.profile_diff import diff_profiles
from perflab.tool_output.profile_evidence import with_stack_evidence
from perflab.tool_output.profile_stacks import Stack, hot_symbols
from perflab.tool_output.symbol_names import cpu_copy, dispatch_pairs, selector_changes
from tests.unit.lenses.asm.test_explain import XMM, YMM, claims, listing

NPY = "_multiarray_umath.cpython-312-x86_64-linux-gnu.so"
OBJ = f"/venv/numpy/_core/{NPY}"
DISABLED = selector_changes({}, {"NPY_DISABLE_CPU_FEATURES": "X86_V3"})


def test_cpu_copies_are_named_by_their_suffix_or_namespace() -> None:
    assert cpu_copy("DOUBLE_add_X86_V3") == ("DOUBLE_add", "X86_V3")
    assert cpu_copy("DOUBLE_add") == ("DOUBLE_add", "")
    assert cpu_copy("dgemm_kernel_HASWELL") == ("dgemm_kernel", "HASWELL")
    assert cpu_copy("sum_avx512") == ("sum", "avx512")
    assert cpu_copy("at::native::AVX2::add_kernel") == ("at::native::*::add_kernel", "AVX2")


def test_selectors_are_the_variables_that_differ_and_the_machine() -> None:
    assert selector_changes({"PATH": "/a"}, {"PATH": "/b"}) == ()
    [said] = selector_changes({"OPENBLAS_CORETYPE": "Haswell"}, {"OPENBLAS_CORETYPE": "Zen"})
    assert "OPENBLAS_CORETYPE=Haswell in the baseline" in said
    assert selector_changes({}, {}, "host-a", "host-b") == (
        "machine: host-a in the baseline, host-b in the variant",
    )


def test_one_copy_replacing_another_under_a_selector_is_a_pair() -> None:
    [pair] = dispatch_pairs(["DOUBLE_add_X86_V3", "main"], ["DOUBLE_add", "main"], DISABLED)
    assert (pair.baseline, pair.variant, pair.stem) == (
        "DOUBLE_add_X86_V3",
        "DOUBLE_add",
        "DOUBLE_add",
    )
    assert any("NPY_DISABLE_CPU_FEATURES=X86_V3" in e for e in pair.evidence())


def test_no_selector_both_ran_other_objects_or_callers_are_no_pair() -> None:
    # a suffix alone is not evidence
    assert dispatch_pairs(["DOUBLE_add_X86_V3"], ["DOUBLE_add"], ()) == ()
    # both copies ran in the variant: not one in place of the other
    assert (
        dispatch_pairs(["DOUBLE_add_X86_V3"], ["DOUBLE_add", "DOUBLE_add_X86_V3"], DISABLED) == ()
    )
    # two objects
    objects = {"DOUBLE_add_X86_V3": "a.so", "DOUBLE_add": "b.so"}
    assert dispatch_pairs(["DOUBLE_add_X86_V3"], ["DOUBLE_add"], DISABLED, object_of=objects) == ()
    # another call site
    callers = {"DOUBLE_add_X86_V3": "ufunc_a", "DOUBLE_add": "ufunc_b"}
    assert dispatch_pairs(["DOUBLE_add_X86_V3"], ["DOUBLE_add"], DISABLED, callers=callers) == ()
    # names of no CPU: no pair by this rule
    assert dispatch_pairs(["compute_v1"], ["compute"], DISABLED) == ()


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


def _stacks(rows: dict[tuple[str, ...], int]) -> Counter[Stack]:
    return Counter({tuple((NPY, f) for f in reversed(frames)): n for frames, n in rows.items()})


def _profile(selectors: tuple[str, ...]) -> ProfileDetails:
    base = _stacks({("main", "ufunc_generic_fastcall", "DOUBLE_add_X86_V3"): 900,
                    ("main", "ufunc_generic_fastcall"): 100})  # fmt: skip
    new = _stacks({("main", "ufunc_generic_fastcall", "DOUBLE_add"): 900,
                   ("main", "ufunc_generic_fastcall"): 100})  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    return ProfileDetails(checked, "cpu-clock", "dwarf", 1000, 1000, selectors=selectors)


def test_profile_claim_names_the_variable_the_object_and_the_caller() -> None:
    [claim] = _profile(DISABLED).diagnoses()
    assert str(claim.claim) == "dispatch_changed"
    assert claim.detail["selected_by"] == list(DISABLED)
    assert claim.detail["object"] == NPY
    assert any("both called from ufunc_generic_fastcall" in e for e in claim.evidence)
    assert any("NPY_DISABLE_CPU_FEATURES" in e for e in claim.evidence)
    # without a selector the claim rests on the call site alone and names no variable
    [plain] = _profile(()).diagnoses()
    assert "selected_by" not in plain.detail


def _costs(*names: str, obj: str = OBJ) -> FunctionCosts:
    ids = [FunctionId(name, obj) for name in ("main", *names)]
    return FunctionCosts(("Ir",), {f: FunctionCost(f, "", (100.0,)) for f in ids})


def test_instructions_show_a_dispatched_pair_on_one_row_only_with_a_selector() -> None:
    base, new = _costs("DOUBLE_add_X86_V3"), _costs("DOUBLE_add")
    pairing = name_pairing(base, new, DISABLED)
    renamed = new.renamed(lambda f: FunctionId(pairing.variant_name(f.name), f.object))
    assert {f.name for f in renamed.functions} == {"main", "DOUBLE_add_X86_V3"}
    [pair] = pairing.pairs
    assert "NPY_DISABLE_CPU_FEATURES=X86_V3" in pair.reason
    assert name_pairing(base, new).pairs == ()  # no selector: two functions
    # the copies of two objects are not one function's
    assert name_pairing(base, _costs("DOUBLE_add", obj="/other.so"), DISABLED).pairs == ()
