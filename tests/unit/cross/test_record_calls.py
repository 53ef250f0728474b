"""Where perflab builds a record of seven or more fields, the fields are named: seven values in a
row say nothing of which is which, and a reordered field would go unnoticed. Parsed from the
source (ast): a call of a dataclass defined in src/perflab, by its name."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"
MOST_POSITIONAL = 6


def _is_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name == "dataclass":
            return True
    return False


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def test_a_record_of_seven_values_is_built_with_their_names() -> None:
    trees = {
        path.relative_to(SRC).as_posix(): ast.parse(path.read_text(), str(path))
        for path in sorted((SRC / "perflab").rglob("*.py"))
    }
    records = {
        node.name
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and _is_dataclass(node)
    }
    packed = [
        f"{path}:{node.lineno} {name}({len(node.args)} values)"
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (name := _called_name(node)) in records
        and len(node.args) > MOST_POSITIONAL
    ]
    assert not packed, "name the fields: " + ", ".join(packed)
