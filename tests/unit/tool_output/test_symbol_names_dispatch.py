"""CPU copies of one function in a library that picks them through its own tables (numpy,
OpenBLAS, ATen): their names, what selects them, and the copies that replace one another. Each
lens's claims on them are tested beside that lens (test_explain_dispatch, test_analyse_dispatch,
test_pairing)."""

from __future__ import annotations

from perflab.tool_output.symbol_names import cpu_copy, dispatch_pairs, selector_changes
from tests.support.symbol_names import DISABLED


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
