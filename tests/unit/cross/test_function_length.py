"""No function in src/perflab is longer than 50 lines (its `def` to its last line, docstring
included), so each can be read at once; a longer one does two things and is split, or carries
its reason in ALLOWED. Read with ast: every function and method, nested ones too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab"
LONGEST_LINES = 50

# "path under src/perflab:function": why it stays longer. Shrink-only: an entry whose function
# is short again (or gone) fails test_every_allowance_is_still_needed
ALLOWED: dict[str, str] = {
    "tool_output/callgrind_format.py:_cost_line": (
        "the hot path of a callgrind file (once per cost line, 10^4-10^5 a file): the "
        "positions and costs are read inline, a call per part would cost more than it reads"
    ),
}


def _function_lines() -> dict[str, int]:
    """Each function's length in lines, by "path:name" (a name defined twice: the longest)."""
    lines_of: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                key = f"{module}:{node.name}"
                length = node.end_lineno - node.lineno + 1
                lines_of[key] = max(length, lines_of.get(key, 0))
    return lines_of


def _too_long() -> dict[str, int]:
    return {key: n for key, n in _function_lines().items() if n > LONGEST_LINES}


def test_no_function_is_longer_than_50_lines() -> None:
    long = {key: n for key, n in _too_long().items() if key not in ALLOWED}
    assert not long, f"split each where it does two things (at most {LONGEST_LINES} lines): " + (
        "; ".join(f"{key} ({n} lines)" for key, n in sorted(long.items()))
    )


def test_every_allowance_is_still_needed() -> None:
    stale = sorted(set(ALLOWED) - set(_too_long()))
    assert not stale, f"no longer over {LONGEST_LINES} lines, remove from ALLOWED: {stale}"


def test_the_check_sees_the_functions() -> None:
    # a walk that found nothing would pass the checks above vacuously
    lines_of = _function_lines()
    assert "api.py:make_experiment" in lines_of
    assert lines_of["tool_output/callgrind_format.py:_cost_line"] > LONGEST_LINES
