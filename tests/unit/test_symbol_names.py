"""One rule folds a compiler's copies of a function for every lens: the instructions lens's
names (`normalise_function_name`, also the profile lens's) and the asm lens's `identity` agree on
every symbol name, and differ only in callgrind's own syntax."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.identity import Role, family, fragment_role, identity
from perflab.measure.callgrind import normalise_function_name
from perflab.measure.symbol_names import fold_clones, split_clone_suffixes

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
