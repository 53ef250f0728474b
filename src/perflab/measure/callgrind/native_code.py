"""Whether a benchmark may run native code that picks its path by the CPU's features (AVX-512
kernels): what valgrind's hiding of AVX-512 can change. A pure-Python statement runs the
interpreter, whose own code does not dispatch on AVX-512; a command, or a statement that imports
an extension module (torch, numpy) or a native-backed stdlib module, may."""

from __future__ import annotations

import ast
import sys

from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark

# stdlib modules backed by libraries that dispatch on the CPU (zlib, OpenSSL, liblzma ...) or
# that call arbitrary native code
_NATIVE_STDLIB = frozenset(
    {"hashlib", "_hashlib", "zlib", "lzma", "bz2", "ssl", "_ssl", "ctypes", "binascii", "mmap"}
)


def _imported(code: str) -> set[str] | None:
    """Top-level module names the code imports; None when it cannot be parsed (unknown)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
        ):
            return None  # a module chosen at run time: unknown
    return names


def native_code(benchmark: Benchmark) -> str | None:
    """Why the benchmark may run CPU-dispatched native code, in words; None for a statement
    that runs only the interpreter and pure stdlib modules."""
    if benchmark.kind is BenchmarkKind.COMMAND:
        return "it runs a program"
    names: set[str] = set()
    for code in (benchmark.setup, benchmark.stmt or ""):
        imported = _imported(code)
        if imported is None:
            return "its code could not be read for imports"
        names |= imported
    native = sorted(n for n in names if n not in sys.stdlib_module_names or n in _NATIVE_STDLIB)
    if native:
        return "it imports " + ", ".join(native)
    return None
