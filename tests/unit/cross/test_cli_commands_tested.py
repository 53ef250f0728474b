"""Every perflab command has a test that runs it as a user types it: some file of tests/cli
calls the command line (`perflab(...)`, `main([...])`, `subprocess.run([...])`) with the
command's name among its arguments. The commands are read from the parser, so a new command
without a CLI test fails here."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from perflab.cli.options import build_parser, subcommand_names

ROOT = Path(__file__).resolve().parents[3]
CLI_TESTS = ROOT / "tests" / "cli"
# what a CLI test calls to run perflab: its own `perflab` helper (any name containing it),
# `perflab.cli.main.main`, or subprocess's `run`
_RUNNERS = frozenset({"main", "run"})

# Commands with no CLI test yet, each with the reason. The test fails when one gains a test, so
# this list can only shrink.
UNTESTED: dict[str, str] = {}


def _strings(node: ast.expr) -> Iterator[str]:
    """The string constants an argument holds: itself, or a list's or tuple's elements."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            yield from _strings(element)
    elif isinstance(node, ast.Starred):
        yield from _strings(node.value)


def _callee(call: ast.Call) -> str:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def invoked_commands(source: str) -> set[str]:
    """The words passed to the command line by the calls in a test file's source."""
    words: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            callee = _callee(node)
            if "perflab" in callee or callee in _RUNNERS:
                words.update(word for arg in node.args for word in _strings(arg))
    return words


@functools.cache
def _tested() -> frozenset[str]:
    words: set[str] = set()
    for path in sorted(CLI_TESTS.glob("test_*.py")):
        words |= invoked_commands(path.read_text())
    return frozenset(words)


def test_every_command_has_a_cli_test() -> None:
    commands = subcommand_names(build_parser())
    assert "run" in commands and "events" in commands, "the parser's commands were not read"
    missing = [c for c in commands if c not in _tested() and c not in UNTESTED]
    assert not missing, f"commands no tests/cli file runs: {missing}"


def test_every_exception_is_still_needed() -> None:
    stale = sorted(set(UNTESTED) & _tested())
    assert not stale, f"UNTESTED names commands that have a CLI test now: {stale}"


def test_a_command_counts_where_the_command_line_is_called() -> None:
    source = "\n".join(
        [
            "perflab('show', '--json', '-', cwd=tmp)",
            "main(['list'])",
            "subprocess.run([sys.executable, '-m', 'perflab', *['doctor']])",
            "print('events')",
        ]
    )
    assert {"show", "list", "doctor"} <= invoked_commands(source)
    assert "events" not in invoked_commands(source)
