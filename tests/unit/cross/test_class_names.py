"""No two public classes in src/perflab share a name, so a class name alone says which one is
meant (in a traceback, a doc, a search). Read with ast: every class a module defines at its top
level whose name does not start with an underscore."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab"

# class name: why several modules may define it (a protocol that asks for one name in each);
# an entry that no longer excuses a duplicate fails test_every_allowance_is_still_needed
ALLOWED: dict[str, str] = {}


def _public_classes() -> dict[str, list[str]]:
    """Each public class name, with the modules (paths under src/perflab) that define it."""
    modules_of: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                modules_of[node.name].append(str(path.relative_to(PACKAGE)))
    return modules_of


def _shared() -> dict[str, list[str]]:
    return {name: paths for name, paths in _public_classes().items() if len(paths) > 1}


def test_no_two_public_classes_share_a_name() -> None:
    shared = {name: paths for name, paths in _shared().items() if name not in ALLOWED}
    assert not shared, "rename so each says which: " + "; ".join(
        f"{name} in {', '.join(paths)}" for name, paths in sorted(shared.items())
    )


def test_every_allowance_is_still_needed() -> None:
    stale = sorted(set(ALLOWED) - set(_shared()))
    assert not stale, f"no longer defined more than once, remove from ALLOWED: {stale}"


def test_the_check_sees_the_classes() -> None:
    # a walk that found nothing would pass the checks above vacuously
    assert "Experiment" in _public_classes()
