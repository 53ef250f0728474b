"""What a machine-code symbol *is*, for pairing across variants: its function and its role.

Three kinds of symbol are not a function of their own (pure string rules, no I/O):

- **fragments and clones** of one source function, which gcc splits off or specialises
  (``foo.cold``, ``foo.part.0``, ``foo.isra.0``, ``foo.constprop.0``, ``foo [clone .cold]``):
  they belong to the function they came from, and its code size counts them (the rule is
  `perflab.tool_output.symbol_names`, shared with the instructions and profile lenses);
- **members of a dispatch family**, several compiled versions of one function of which the
  program picks one at run time: ATen's per-ISA namespaces (``at::native::AVX2::``,
  ``AVX512::``, ``DEFAULT::``), gcc's multi-versioned clones (``foo.avx2``, ``foo.default``,
  ``foo.resolver``, ``foo.arch_x86_64_v3``) and glibc's ifunc targets
  (``__memcpy_avx_unaligned_erms``, ``__memcpy_evex_unaligned_erms``, ``__strlen_sse2``);
- everything else is its own function.

``identity`` folds fragments and clones (the row a user reads: ``foo``); ``family`` also folds
the dispatch member (``foo`` for ``foo.avx2``, ``memcpy`` for ``__memcpy_evex_unaligned_erms``).
Two symbols of one family that differ in ``member`` are different compiled versions: one running
in place of the other is a dispatch change, not a code change.
"""

from __future__ import annotations

import enum
import re

from perflab.tool_output.symbol_names import fold_clones, split_clone_suffixes

# Fragments and clones are folded by the rule every lens shares (perflab.tool_output.symbol_names);
# a multi-versioned clone's "[clone .avx2]" is a dispatch member, not a clone, and stays there
# for `split_member`.
_VERSION_BRACKET = re.compile(r"\s*\[clone \.(?P<member>[^\]]+?)(?:\.\d+)?\]$")
# gcc target_clones / target("...") multi-versioning: foo.avx2, foo.default, foo.resolver,
# foo.arch_x86_64_v3, foo.avx512f.0 (C++ adds the suffix after the mangled name)
_GCC_VERSION = re.compile(
    r"\.(?P<member>resolver|default|arch_\w+|avx512\w*|avx2|avx|sse\d\w*|ssse3|fma\w*|popcnt)"
    r"(?:\.\d+)?$"
)
# ATen compiles each kernel file once per ISA inside `namespace CPU_CAPABILITY`, a macro that
# becomes DEFAULT, AVX2, AVX512 ... (pairing across variants reads it too: code_diff.py)
ISA_NAMESPACE = re.compile(
    r"(?<=::)(?P<member>DEFAULT|AVX|AVX2|AVX512(?:_[A-Z0-9]+)?|ZVECTOR|VSX|NEON|SVE\d*)(?=::)"
)
# glibc's ifunc targets: __<function>_<isa>[_<variant>...]
_IFUNC_TARGET = re.compile(
    r"^__(?P<base>[a-z][a-z0-9]*?)_(?P<member>(?:sse2|sse4_1|sse4_2|ssse3|avx2|avx512[a-z]*|avx|"
    r"evex512|evex|erms|fma4?|lasx|lsx)(?:_[a-z0-9]+)*)$"
)
# other projects' ISA suffixes: kernel_avx2, kernel_AVX512F
ISA_SUFFIX = re.compile(r"(?i)[._](?P<member>avx512\w*|avx2|avx|sse\d*\w*|fma3?)$")


class Role(enum.StrEnum):
    """What a symbol is to its function: the function itself, a piece split off it, or a specialised
    copy."""

    FUNCTION = "function"
    FRAGMENT = "fragment"  # .cold, .part.N: a piece split off its function
    CLONE = "clone"  # .isra.N, .constprop.N: a specialised copy of its function


def fragment_role(name: str) -> Role:
    text = split_clone_suffixes(name)[1]
    if not text:
        return Role.FUNCTION
    if ".cold" in text or ".part" in text:
        return Role.FRAGMENT
    return Role.CLONE


def identity(name: str) -> str:
    """The function a symbol belongs to: fragment and clone suffixes folded (demangled input).
    The same rule as the instructions and profile lenses' names (`fold_clones`); asm then
    tells dispatch members apart (`family`, `member`), which they do not."""
    return fold_clones(name)


def family(name: str) -> str:
    """The dispatch family: `identity` with the compiled version's ISA folded."""
    return split_member(name)[0]


def member(name: str) -> str:
    """Which compiled version of its family a symbol is ("" when it is not a dispatch member)."""
    return split_member(name)[1]


def split_member(name: str) -> tuple[str, str]:
    """A symbol's name split into its function and the member of a family of copies (an ISA or IFUNC
    variant, a versioned copy); the member is "" when there is none."""
    base = identity(name)
    match = _IFUNC_TARGET.match(base)
    if match:
        return match.group("base"), match.group("member")
    # each search runs only where the text it needs is there: an object's symbol table is read
    # whole (libtorch_cpu.so: 420k names, most of them long C++ names with no member)
    match = _GCC_VERSION.search(base) if "." in base else None
    if match:
        return base[: match.start()], match.group("member")
    match = _VERSION_BRACKET.search(base) if "[clone ." in base else None
    if match and _GCC_VERSION.fullmatch("." + match.group("member")):
        return base[: match.start()], match.group("member")
    match = ISA_NAMESPACE.search(base) if _ISA_NAMESPACE_START.search(base) else None
    if match:
        return ISA_NAMESPACE.sub("CPU_CAPABILITY", base), match.group("member")
    ends_in_word = base[-1:].isalnum() or base.endswith("_")
    named = ends_in_word and any(w in base.lower() for w in _ISA_SUFFIX_STARTS)
    match = ISA_SUFFIX.search(base) if named else None
    if match:
        return base[: match.start()], match.group("member")
    return base, ""


# what a member of `ISA_NAMESPACE` and of `ISA_SUFFIX` starts with
_ISA_NAMESPACE_START = re.compile(r"::(?:DEFAULT::|AVX|ZVECTOR::|VSX::|NEON::|SVE)")
_ISA_SUFFIX_STARTS = ("avx", "sse", "fma")


_DIGITS = re.compile(r"\d+")


def callee_stem(name: str) -> str:
    """A callee's name with versions and widths folded, to recognise the same callee in another
    width or version (``Sleef_expf8_u10`` and ``Sleef_expf16_u10`` -> ``Sleef_expf#_u#``)."""
    name = name.split("@", 1)[0]
    return _DIGITS.sub("#", family(name))
