"""Two builds of one library under different file names, paired: one rule for every lens that
compares functions across variants (instructions, profile, asm).

Variants often load the same library under another name: ``libpython3.11.so.1.0`` and
``libpython3.12.so.1.0``, a soname's version (``libfoo.so.1`` and ``libfoo.so.2``), a wheel's
vendored copy with its content hash (``libopenblas64_p-r0-0cf96a72.3.23.so``), an interpreter
(``python3.11``, ``python3.12``). A function that ran in both is one row, not a row "baseline
only" in one file and "variant only" in the other whose deltas cancel.

The rule: an object's *library name* is its file name without the ``.so`` suffix and what
follows it, without an auditwheel hash and without trailing version numbers. Two objects are
paired only when each is the only object of its library name on its side and neither file name
is on the other side: when a side loads two objects of one name, or keeps the same file, nothing
is guessed. An object is named to the user by its file name alone (`object_basename`). Pure
string rules, no I/O.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_SO = re.compile(r"\.so(?:\.[0-9][\w.]*)?$|\.so\b.*$")
_WHEEL_HASH = re.compile(r"-[0-9a-f]{8,}(?=$|[.\-_])")
_VERSION = re.compile(r"(?:[-_.]?v?\d+(?:[._]\d+)*[a-z]?\d*|\.(?:dev|post|rc)\d*)+$")
# CPython extension tags: `.cpython-311-x86_64-linux-gnu`, `.abi3`
_ABI_TAG = re.compile(r"\.(?:cpython-[\w-]+|abi3|pypy[\w-]*)$")


def object_basename(path: str) -> str:
    """The object's file name: the last part of its path."""
    return path.rsplit("/", 1)[-1]


def library_name(name: str) -> str:
    """`libpython3.11.so.1.0` -> `libpython`, `python3.12` -> `python`,
    `libscipy_openblas64_-ff651d7f.so` -> `libscipy_openblas64_` ... (a file name or a path)."""
    base = os.path.basename(name.rstrip("/")) or name
    text = _SO.sub("", base)
    text = _ABI_TAG.sub("", text)
    text = _WHEEL_HASH.sub("", text)
    stripped = _VERSION.sub("", text)
    # a name that is all version (`2.0`) or a single letter keeps its own spelling
    return stripped if len(stripped) >= 2 else text


def pair_objects(baseline: Iterable[str], variant: Iterable[str]) -> dict[str, str]:
    """Variant object -> the baseline object it is another build of (file names, as compared).

    Only objects whose file name is not on the other side, and only where the library name is
    unique on both sides."""
    left, right = set(baseline), set(variant)
    only_left, only_right = left - right, right - left

    def by_library(names: Iterable[str], every: Iterable[str]) -> dict[str, str]:
        counts: dict[str, int] = {}
        for name in every:
            key = library_name(name)
            counts[key] = counts.get(key, 0) + 1
        return {library_name(n): n for n in names if counts[library_name(n)] == 1}

    lefts, rights = by_library(only_left, left), by_library(only_right, right)
    return {rights[key]: lefts[key] for key in rights.keys() & lefts.keys()}


def invert(pairs: Mapping[str, str]) -> dict[str, str]:
    return {b: v for v, b in pairs.items()}
