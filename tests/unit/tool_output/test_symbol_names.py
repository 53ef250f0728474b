"""One rule folds a compiler's copies of a function for every lens: the instructions lens's
names (`normalise_function_name`, also the profile lens's) and the asm lens's `identity` agree on
every symbol name, and differ only in callgrind's own syntax."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.identity import Role, family, fragment_role, identity
from perflab.tool_output.callgrind import normalise_function_name
from perflab.tool_output.symbol_names import (
    brief,
    fold_clones,
    pair_names,
    plt_target,
    readable,
    spelling_stem,
    split_clone_suffixes,
)

FOLDED = [
    ("foo", "foo"),
    ("foo.cold", "foo"),
    ("foo.cold.1.part.2", "foo"),
    ("foo.isra.0", "foo"),
    ("foo.constprop.0.isra.0", "foo"),
    ("foo.lto_priv.0", "foo"),
    ("foo.llvm.123456", "foo"),
    ("foo.localalias", "foo"),
    ("foo.specialized.1", "foo"),
    ("foo() [clone .isra.0]", "foo()"),  # c++filt, callgrind, nm -C
    ("foo() [clone .constprop.0] [clone .isra.0]", "foo()"),
    ("operator() (.part.0)", "operator()"),  # llvm-symbolizer
    ("_ZN2at6native3addEv.constprop.0", "_ZN2at6native3addEv"),
    # dispatch members are functions of their own: which one ran is a dispatch change
    ("foo.avx2", "foo.avx2"),
    ("foo.resolver", "foo.resolver"),
    ("foo() [clone .avx2]", "foo() [clone .avx2]"),
    ("foo() [clone .default]", "foo() [clone .default]"),
    ("foo() [clone .isra.0] [clone .avx2]", "foo() [clone .avx2]"),
    (".cold", ".cold"),  # all suffix: its own name
]


@pytest.mark.parametrize(("name", "folded"), FOLDED)
def test_every_lens_folds_a_name_the_same_way(name: str, folded: str) -> None:
    assert fold_clones(name) == folded
    assert normalise_function_name(name) == identity(name) == folded


def test_only_callgrinds_own_syntax_differs() -> None:
    """Recursion marks and symbol-less addresses are callgrind's, and only its lens reads them."""
    assert normalise_function_name("foo.isra.0'2") == "foo"
    assert normalise_function_name("0x4011d0") == "[unknown]"
    assert identity("0x4011d0") == "0x4011d0"


def test_the_suffixes_say_what_kind_of_copy() -> None:
    assert split_clone_suffixes("foo() [clone .cold]") == ("foo()", " [clone .cold]")
    assert split_clone_suffixes("foo.constprop.0.isra.1") == ("foo", ".constprop.0.isra.1")
    assert fragment_role("foo() [clone .cold]") is Role.FRAGMENT
    assert fragment_role("foo (.isra.0)") is Role.CLONE
    assert fragment_role("foo() [clone .avx2]") is Role.FUNCTION
    assert family("foo() [clone .isra.0] [clone .avx2]") == "foo()"


# -- what a build spells differently: one function, one row --------------------------------------

LEGACY_RANGE = (
    "_$LT$core..ops..range..Range$LT$T$GT$$u20$as$u20$core..iter..range..RangeIteratorImpl$GT$"
    "::spec_next::h680aaf5d04044e1f"
)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("sumbench::sum_slice::hb17a8c125cb85c7d", "sumbench::sum_slice"),
        (
            LEGACY_RANGE,
            "<core::ops::range::Range<T> as core::iter::range::RangeIteratorImpl>::spec_next",
        ),
        ("std::rt::lang_start::{{closure}}::hd9d3f85cf1a37dbf", "std::rt::lang_start::{{closure}}"),
        ("sumbench[73200543cee1b05f]::sum_slice", "sumbench::sum_slice"),  # c++filt on v0
        ("<alloc[5a3c]::vec::Vec<u8>>::push", "<alloc::vec::Vec<u8>>::push"),
        ("foo::h2a007e59dc11a093 [clone .cold]", "foo [clone .cold]"),
        # C and C++ names are left as they are
        ("int (*) [16]", "int (*) [16]"),
        ("printf(char const*, ...)", "printf(char const*, ...)"),
        ("DOUBLE_add_X86_V3", "DOUBLE_add_X86_V3"),
    ],
)
def test_names_are_shown_without_what_the_build_spelled(name: str, shown: str) -> None:
    assert readable(name) == shown


def test_the_stem_leaves_out_every_build_dependent_spelling() -> None:
    assert spelling_stem("sumbench::sum_slice::h6d32bd3152f0eb41") == "sumbench::sum_slice"
    assert spelling_stem("foo.lto_priv.3") == spelling_stem("foo.llvm.4417") == "foo"
    assert spelling_stem("counter.1234") == "counter"
    assert spelling_stem("foo.avx2") == "foo.avx2"  # a dispatch member is a function of its own
    # a v0 symbol no demangler read: its crate disambiguator (`Cs<base-62>_`) left out
    assert spelling_stem("_RNvCs9SO6l95hc9n_8sumbench9sum_slice") == spelling_stem(
        "_RNvCsfq2Zq5gqAK1_8sumbench9sum_slice"
    )


def test_one_function_built_twice_is_paired_and_says_why() -> None:
    """The issue's Rust case: cargo's two flag sets give `sum_slice` two hashes."""
    pairing = pair_names(
        ["sumbench::sum_slice::hb17a8c125cb85c7d", "main"],
        ["sumbench::sum_slice::h6d32bd3152f0eb41", "main"],
    )
    assert pairing.renamed == {
        "sumbench::sum_slice::h6d32bd3152f0eb41": "sumbench::sum_slice::hb17a8c125cb85c7d"
    }
    assert pairing.variant_name("sumbench::sum_slice::h6d32bd3152f0eb41 [clone .cold]") == (
        "sumbench::sum_slice::hb17a8c125cb85c7d [clone .cold]"
    )
    assert pairing.variant_name("main") == "main"
    pair = pairing.pair_of("sumbench::sum_slice::h6d32bd3152f0eb41")
    assert pair is not None
    assert "the only function named sumbench::sum_slice in each build" in pair.reason
    assert not pairing.unpaired


def test_a_fragment_of_the_function_does_not_make_its_stem_ambiguous() -> None:
    pairing = pair_names(
        ["f::h1111111111111111", "f::h1111111111111111.cold"],
        ["f::h2222222222222222", "f::h2222222222222222 [clone .cold]"],
    )
    assert pairing.renamed == {"f::h2222222222222222": "f::h1111111111111111"}


def test_two_functions_of_one_stem_in_one_build_are_never_merged() -> None:
    """Two instantiations of a generic function differ only in their hash: within a build they
    stay two, and across builds none is guessed (only identical spellings match)."""
    baseline = [
        "core::iter::Iterator::fold::h1111111111111111",
        "core::iter::Iterator::fold::h2222222222222222",
    ]
    variant = [
        "core::iter::Iterator::fold::h3333333333333333",
        "core::iter::Iterator::fold::h2222222222222222",
    ]
    pairing = pair_names(baseline, variant)
    assert pairing.pairs == ()
    assert pairing.variant_name(variant[0]) == variant[0]
    (unpaired,) = pairing.unpaired
    assert unpaired.stem == "core::iter::Iterator::fold"
    assert unpaired.baseline == tuple(sorted(baseline))
    assert "cannot be told by name" in unpaired.reason
    # within one build, nothing at all is paired
    assert pair_names(baseline, []).pairs == ()


def test_v0_disambiguators_and_local_numbers_pair_like_hashes() -> None:
    pairing = pair_names(
        ["sumbench[73200543cee1b05f]::sum_slice", "counter.1234"],
        ["sumbench[0a1b2c3d4e5f6071]::sum_slice", "counter.987"],
    )
    assert pairing.renamed == {
        "sumbench[0a1b2c3d4e5f6071]::sum_slice": "sumbench[73200543cee1b05f]::sum_slice",
        "counter.987": "counter.1234",
    }


ATEN_CALLBACK = (
    "void c10::function_ref<void (char**, long const*, long, long)>::callback_fn<at::native::AVX2"
    "::VectorizedLoop2d<at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::Tensor"
    "IteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda(float)#1}, at::native::"
    "(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{l"
    "ambda()#1}::operator()() const::{lambda(at::vec::AVX2::Vectorized<float>)#1}> >(long, char**,"
    " long const*, long, long)"
)
WRAPPER = (
    "c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<c10::Comp"
    "ileTimeFunctionPointer<at::Tensor (at::Tensor const&, c10::Scalar const&), &at::(anonymous na"
    "mespace)::wrapper_CPU_clamp_min>, at::Tensor, c10::guts::typelist::typelist<at::Tensor const&"
    ", c10::Scalar const&> >, at::Tensor (at::Tensor const&, c10::Scalar const&)>::call"
)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        # the first function the arguments call names the kernel a dispatcher's callback runs
        (
            ATEN_CALLBACK,
            "void c10::function_ref<…>::callback_fn<…clamp_min_scalar_kernel_impl…>"
            "(long, char**, long const*, long, long)",
        ),
        # or the function they point to
        (WRAPPER, "c10::impl::wrap_kernel_functor_unboxed_<…wrapper_CPU_clamp_min…>::call"),
        # short argument lists stay; `operator<` is a name, not a bracket
        (
            "std::set<int>::operator<(std::set<int, std::less<int>, std::allocator<int> > const&)"
            " const, " + "x" * 20,
            "std::set<int>::operator<(std::set<…> const&) const, " + "x" * 20,
        ),
        ("short<with, arguments<kept>>()", "short<with, arguments<kept>>()"),
        ("unbalanced<" + "a" * 120, "unbalanced<" + "a" * 120),  # returned as it is
    ],
)
def test_a_long_name_is_shortened_for_a_sentence(name: str, shown: str) -> None:
    assert brief(name) == shown


def test_a_plt_stub_is_named_for_the_function_it_jumps_to() -> None:
    assert plt_target("_Py_Dealloc@plt") == "_Py_Dealloc"
    assert plt_target("memcpy") == "memcpy"
    assert plt_target("@plt") == "@plt"  # nothing left: its own name
