"""CPU copies of one function in a library that picks them through its own tables (numpy,
OpenBLAS, ATen): their names, what selects them, and the copies that replace one another. Each
lens's claims on them are tested beside that lens (test_explain_dispatch, test_analyse_dispatch,
test_pairing)."""

from __future__ import annotations

from perflab.tool_output.symbol_names import (
    cpu_copy,
    dispatch_pairs,
    selector_changes,
    vector_instance,
    vector_pairs,
)
from tests.support.symbol_names import (
    AVX2_PARTITION,
    AVX2_SORT,
    DISABLED,
    NPY,
    ZMM_PARTITION,
    ZMM_SORT,
)


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


def test_a_templates_instantiations_for_two_vector_types_share_a_stem() -> None:
    stem, words = vector_instance(ZMM_SORT)
    assert stem == vector_instance(AVX2_SORT)[0]
    assert words == ("zmm", "zmm", "__vector(16)", "zmm")
    # the unroll count follows the width: equal only with integer arguments left out
    assert vector_instance(ZMM_PARTITION)[0] != vector_instance(AVX2_PARTITION)[0]
    assert (
        vector_instance(ZMM_PARTITION, counts=True)[0]
        == vector_instance(AVX2_PARTITION, counts=True)[0]
    )
    assert vector_instance("DOUBLE_add_X86_V3") == ("", ())
    assert vector_instance("std::vector<float>::push_back(float const&)") == ("", ())


def test_instantiations_each_run_in_one_variant_pair_and_say_why() -> None:
    objects = {name: NPY for name in (ZMM_SORT, AVX2_SORT, ZMM_PARTITION, AVX2_PARTITION)}
    pairs = vector_pairs([ZMM_SORT, ZMM_PARTITION], [AVX2_SORT, AVX2_PARTITION], object_of=objects)
    by_old = {pair.baseline: pair for pair in pairs}
    assert set(by_old) == {ZMM_SORT, ZMM_PARTITION}
    sort = by_old[ZMM_SORT]
    assert sort.variant == AVX2_SORT and sort.object_name == NPY
    assert sort.arguments == (("zmm", "avx2"), ("__vector(16)", "__vector(8)"))
    assert "one template instantiated for other vector types (zmm -> avx2, __vector(16) -> " in (
        sort.reason
    )
    assert "each the only instantiation of it that ran in its variant" in sort.reason
    partition = by_old[ZMM_PARTITION]
    assert partition.arguments == (("zmm", "avx2"), ("8", "4"))
    assert partition.variant == AVX2_PARTITION  # as the caller spelt it, to find its row
    # a function and its split-off part are one instantiation, named by its shortest spelling
    [split] = vector_pairs([f"{ZMM_SORT} [clone .cold]", ZMM_SORT], [AVX2_SORT])
    assert split.baseline == ZMM_SORT


def test_no_pair_when_both_ran_objects_differ_or_only_a_count_differs() -> None:
    assert vector_pairs([ZMM_SORT, AVX2_SORT], [AVX2_SORT]) == ()
    assert vector_pairs([ZMM_SORT], [AVX2_SORT, ZMM_SORT]) == ()
    other = {ZMM_SORT: NPY, AVX2_SORT: "libother.so"}
    assert vector_pairs([ZMM_SORT], [AVX2_SORT], object_of=other) == ()
    # two zmm instantiations, one per side: another size, not another vector type
    zmm16 = ZMM_SORT.replace(" 32,", " 16,")
    assert vector_pairs([ZMM_SORT], [zmm16]) == ()
    # two of one side could be either: which replaced which cannot be told
    avx16 = AVX2_SORT.replace(" 32,", " 16,")
    assert (
        vector_pairs([ZMM_PARTITION], [AVX2_PARTITION, AVX2_PARTITION.replace(" 4,", " 2,")]) == ()
    )
    assert len(vector_pairs([ZMM_SORT, zmm16], [AVX2_SORT, avx16])) == 2  # counts kept: each one
