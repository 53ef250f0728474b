"""Every public class in src/perflab, and every public module-level function whose body is over
MAX_BODY_LINES lines, has a docstring saying what it holds or does, so a cold reader need not
reverse-engineer it from its fields or its code. Read with ast: a class is public when neither
its name nor an enclosing class's name starts with an underscore; methods are left out (a
protocol's method is documented once, on the protocol)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab"
# a function this short reads as its own description
MAX_BODY_LINES = 8


def _classes(
    body: list[ast.stmt], path: str, outer: str = ""
) -> Iterator[tuple[str, ast.ClassDef]]:
    """Each public class in `body` and in the public classes nested in it, as (place, node)."""
    for node in body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield f"{path}:{outer}{node.name}", node
            yield from _classes(node.body, path, f"{outer}{node.name}.")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text())


def _long_functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each public module-level function whose body is over MAX_BODY_LINES lines."""
    for path, tree in _modules():
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body_lines = (node.end_lineno or node.lineno) - node.body[0].lineno + 1
            if not node.name.startswith("_") and body_lines > MAX_BODY_LINES:
                yield f"{path}:{node.name}", node


def test_every_public_class_has_a_docstring() -> None:
    missing = [
        place
        for path, tree in _modules()
        for place, node in _classes(tree.body, path)
        if ast.get_docstring(node) is None
    ]
    assert not missing, "say in one sentence what each holds or is for:\n" + "\n".join(missing)


def test_every_long_public_function_has_a_docstring() -> None:
    missing = [place for place, node in _long_functions() if ast.get_docstring(node) is None]
    assert not missing, "say in one sentence what each returns or does:\n" + "\n".join(missing)


def test_the_check_sees_the_code() -> None:
    # a walk that found nothing would pass the checks above vacuously
    places = {place for path, tree in _modules() for place, _ in _classes(tree.body, path)}
    assert "records/model.py:Experiment" in places
    assert "plan/experiment_file.py:load_experiment" in dict(_long_functions())
