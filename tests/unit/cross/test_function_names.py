"""No two public top-level functions in src/perflab share a name unless they mean the same thing,
so a function's name alone says which one is meant (in a traceback, a doc, a search). Read with
ast: every function a module defines at its top level whose name does not start with an
underscore."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab"

# function name: why several modules define it (one meaning, asked for in each place);
# an entry that no longer excuses a duplicate fails test_every_allowance_is_still_needed
ALLOWED: dict[str, str] = {
    # each lens's hooks, looked up through its descriptor
    "section": "each lens's render hook: its section of the report",
    "accounting": "the explaining lenses' hook: the difference and the functions it is made of",
    "code_facts": "the code lenses' hook: what their comparison says about the code that ran",
    "same_code": "the code lenses' hook: their finding that the code is the same",
    # one entry point per suite plugin and per workflow handler, called through a table
    "parse_listing": "each suite plugin's reading of its tool's list of benchmarks",
    "select": "each suite plugin's choice of benchmarks from that list",
    "handle": "each workflow's CLI handler",
    "view": "each workflow's terminal view of its answer",
    # the two ends of one worker op, named after the op
    "rss_sample": "the op `rss_sample`: its worker handler and the parent's call",
    "torch_profile": "the op `torch_profile`: its worker handler and the parent's call",
    # the worker imports nothing of perflab, so it keeps its own copy of the same act
    "become_subreaper": "perflab's process and the worker each become a child subreaper",
    "main": "each program's entry point: the CLI and each worker script",
    # perflab.api is the documented face: each forwards to the function it is named after
    "asm_views": "perflab.api forwards to lenses.asm.analyse",
    "check_store": "perflab.api forwards to store.health",
}


def _public_functions() -> dict[str, list[str]]:
    """Each public function name, with the modules (paths under src/perflab) that define it."""
    modules_of: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if is_function and not node.name.startswith("_"):
                modules_of[node.name].append(str(path.relative_to(PACKAGE)))
    return modules_of


def _shared() -> dict[str, list[str]]:
    return {name: paths for name, paths in _public_functions().items() if len(paths) > 1}


def test_no_two_public_functions_share_a_name() -> None:
    shared = {name: paths for name, paths in _shared().items() if name not in ALLOWED}
    assert not shared, "rename so each says what it does: " + "; ".join(
        f"{name} in {', '.join(paths)}" for name, paths in sorted(shared.items())
    )


def test_every_allowance_is_still_needed() -> None:
    stale = sorted(set(ALLOWED) - set(_shared()))
    assert not stale, f"no longer defined more than once, remove from ALLOWED: {stale}"


def test_the_check_sees_the_functions() -> None:
    # a walk that found nothing would pass the checks above vacuously
    assert "make_experiment" in _public_functions()
