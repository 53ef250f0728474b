"""What a function's name says (lenses/asm/identity.py): the function a fragment or a clone is
part of, the family of a dispatched kernel and its member (the CPU it was built for), and the
stem a callee keeps across vector widths."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.identity import Role, callee_stem, family, fragment_role, identity, member


@pytest.mark.parametrize(
    ("name", "ident", "fam", "mem", "role"),
    [
        ("work.cold", "work", "work", "", Role.FRAGMENT),
        ("work.part.0", "work", "work", "", Role.FRAGMENT),
        ("work.isra.0", "work", "work", "", Role.CLONE),
        ("work.constprop.0.isra.0", "work", "work", "", Role.CLONE),
        ("at_add(long, long, long) [clone .cold]", "at_add(long, long, long)", None, "", None),
        ("scale.avx2", "scale.avx2", "scale", "avx2", Role.FUNCTION),
        ("scale.default", "scale.default", "scale", "default", Role.FUNCTION),
        ("scale.resolver", "scale.resolver", "scale", "resolver", Role.FUNCTION),
        ("__memmove_avx_unaligned_erms", None, "memmove", "avx_unaligned_erms", None),
        ("__memmove_evex_unaligned_erms", None, "memmove", "evex_unaligned_erms", None),
        ("__strlen_sse2", None, "strlen", "sse2", None),
        ("at::native::AVX2::k(float)", None, "at::native::CPU_CAPABILITY::k(float)", "AVX2", None),
        (
            "at::native::DEFAULT::k(float)",
            None,
            "at::native::CPU_CAPABILITY::k(float)",
            "DEFAULT",
            None,
        ),
        ("__libc_start_main", None, "__libc_start_main", "", None),
        ("foo() [clone .avx2]", "foo() [clone .avx2]", "foo()", "avx2", Role.FUNCTION),
        ("foo() [clone .arch_x86_64_v3]", None, "foo()", "arch_x86_64_v3", Role.FUNCTION),
        ("foo(int) [clone .part.0] [clone .cold]", "foo(int)", "foo(int)", "", Role.FRAGMENT),
        ("foo(int) [clone .isra.0]", "foo(int)", "foo(int)", "", Role.CLONE),
    ],
)
def test_identity_family_and_member(
    name: str, ident: str | None, fam: str | None, mem: str, role: Role | None
) -> None:
    if ident is not None:
        assert identity(name) == ident
    if fam is not None:
        assert family(name) == fam
    assert member(name) == mem
    if role is not None:
        assert fragment_role(name) is role


@pytest.mark.parametrize(
    ("name", "fam", "mem"),
    [
        # each search of `split_member` runs only where its text is in the name: on each side of
        # every guard, the answer the unguarded rule gives
        ("f<int...>(int...)", "f<int...>(int...)", ""),  # dots, no copy's suffix
        ("g(float) const", "g(float) const", ""),  # ends in a word, no ISA word
        ("kernel_avx2(int)", "kernel_avx2(int)", ""),  # an ISA word, not at the end
        ("kernel_AVX512F", "kernel", "AVX512F"),
        ("blend_sse4_", "blend", "sse4_"),  # ends in "_", still a word
        ("sum.fma", "sum", "fma"),
        ("x::AVX512_VNNI::y(int)", "x::CPU_CAPABILITY::y(int)", "AVX512_VNNI"),
        ("x::AVXish::y", "x::AVXish::y", ""),  # starts like an ISA namespace, is not one
        ("h() [clone .avx512f.0]", "h()", "avx512f"),
        ("q() [clone .lto_priv.0]", "q()", ""),
    ],
)
def test_the_guards_never_change_the_answer(name: str, fam: str, mem: str) -> None:
    assert (family(name), member(name)) == (fam, mem)


def test_callee_stems_fold_widths() -> None:
    assert callee_stem("Sleef_expf8_u10") == callee_stem("Sleef_expf16_u10@plt")
    assert callee_stem("Sleef_expf8_u10") != callee_stem("Sleef_logf8_u10")
