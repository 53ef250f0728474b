"""perflab's modules and the perflab modules each imports, read from the source (ast), and the
known exceptions to the layer rule: shared by the layer tests on the source (tests/unit/cross)
and at run time (tests/integration)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


# Known violations of the layer rule (tests/unit/cross/test_layers.py), each with the change that
# removes it. The test fails when one disappears, so this list can only shrink.
PENDING: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "perflab").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST, typing_too: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing_too:
            yield from (n for child in node.orelse for n in _import_nodes_of(child, typing_too))
            continue
        yield from _import_nodes_of(node, typing_too)


def _import_nodes_of(node: ast.AST, typing_too: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _import_nodes(node, typing_too)


def imports_of(module: str) -> set[str]:
    """The perflab modules `module` imports (a name imported from a package counts as the
    submodule when there is one)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    # records/ is the bottom layer: even a type named only for the checker stays in it
    typing_too = module == "perflab.records" or module.startswith("perflab.records.")
    for node in _import_nodes(tree, typing_too):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        found.update(n for n in names if n == "perflab" or n.startswith("perflab."))
    return found
