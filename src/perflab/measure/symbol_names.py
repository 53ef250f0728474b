"""The copies a compiler makes of one source function, folded back into it: one rule for every
lens that compares functions by name across builds (instructions, profile, asm).

gcc and clang split a function's unlikely blocks off (``foo.cold``, ``foo.part.0``) and
specialise it (``foo.isra.0``, ``foo.constprop.0``, LLVM's ``foo.specialized.1``); LTO renames
(``foo.lto_priv.0``, ``foo.llvm.123456``). The suffixes stack (``foo.constprop.0.isra.0``) and
come in three spellings: in the symbol table (``foo.isra.0``), demangled by c++filt, callgrind
or ``nm -C`` (``foo() [clone .isra.0]``) and by llvm-symbolizer (``foo() (.isra.0)``).

Not folded: the members of a dispatch family, several compiled versions of one function of which
the program picks one at run time (gcc's ``target_clones``: ``foo.avx2``, ``foo.default``,
``foo.resolver``, ``foo() [clone .avx2]``). One running in place of another is a dispatch
change, which the asm lens claims (`perflab.lenses.asm.identity`) and the instructions and
profile lenses show as two functions. Pure string rules, no I/O.
"""

from __future__ import annotations

import re

# the kinds of copy, as the suffix names them
_KINDS = r"(?:cold|part|isra|constprop|lto_priv|localalias|clone|llvm|specialized)"
_SUFFIX = rf"\.{_KINDS}(?:\.\d+)*"
_MANGLED = re.compile(rf"(?:{_SUFFIX})+$")
_DEMANGLED = re.compile(rf"\s*(?:\[clone |\()(?:{_SUFFIX})+[\])]")


def split_clone_suffixes(name: str) -> tuple[str, str]:
    """(the function's name, the copy's suffixes as written: "" for the function itself)."""
    brackets = "".join(found.group(0) for found in _DEMANGLED.finditer(name))
    rest = _DEMANGLED.sub("", name)
    suffix = _MANGLED.search(rest)
    base = rest[: suffix.start()] if suffix else rest
    base = base.strip()
    if not base:  # a name that is all suffix (".cold") is its own name
        return name, ""
    return base, (suffix.group(0) if suffix else "") + brackets


def fold_clones(name: str) -> str:
    """The source function a symbol's code belongs to: ``foo`` for ``foo.isra.0``,
    ``foo() [clone .cold]`` and ``foo() (.part.0)``; dispatch members are kept."""
    return split_clone_suffixes(name)[0]


_WORDS = re.compile(r"([_.:]+)")


def word_change(old: str, new: str) -> tuple[str, str] | None:
    """The one word two names differ in (`dgemm_kernel_SKYLAKEX`, `dgemm_kernel_HASWELL`:
    SKYLAKEX -> HASWELL), or None when they differ in more or in none. A hint for pairing the
    builds of one function for different CPUs, never evidence on its own."""
    a, b = _WORDS.split(old), _WORDS.split(new)
    if len(a) != len(b):
        return None
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(differ) != 1:
        return None
    x, y = differ[0]
    if not x or not y or _WORDS.fullmatch(x) or _WORDS.fullmatch(y):
        return None
    return x, y
