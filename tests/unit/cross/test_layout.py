"""Where a unit test lives (docs/architecture.md, "Tests"): tests/unit mirrors src/perflab, so
the tests of a module are found without searching, and a unit test starts no process, so
tests/unit stays fast and runs anywhere; a test that needs a real process belongs in
tests/integration (tests/cli when it drives the perflab command)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "tests" / "unit"
# the packages and the few modules at src/perflab's root (api) a folder may be named after
PACKAGES = frozenset(
    p.name if p.is_dir() else p.stem
    for p in (ROOT / "src" / "perflab").iterdir()
    if (p / "__init__.py").is_file() or (p.suffix == ".py" and p.name != "__init__.py")
)
# tests of the repository as a whole (layers, docs, bench scripts), not of one package
CROSS = "cross"
# modules that start processes (tests.git_repo runs git); a unit test uses machine.proc's
# FakeRunner instead
SPAWNING = frozenset({"subprocess", "multiprocessing", "tests.git_repo"})
SPAWNING_NAMES = frozenset({"SubprocessRunner"})


def _unit_modules() -> list[Path]:
    return sorted(p for p in UNIT.rglob("*.py") if p.name not in {"__init__.py", "conftest.py"})


def _imported(path: Path) -> tuple[set[str], set[str]]:
    """Every module a file imports (in functions too) and every name it imports from one."""
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
            names.update(alias.name for alias in node.names)
    return modules, names


def test_every_unit_test_lives_in_the_folder_of_the_package_it_tests() -> None:
    misplaced = []
    for path in _unit_modules():
        relative = path.relative_to(UNIT)
        folder = relative.parts[0] if len(relative.parts) > 1 else None
        if folder == CROSS:
            continue
        modules, _ = _imported(path)
        if folder not in PACKAGES or not any(
            m == f"perflab.{folder}" or m.startswith(f"perflab.{folder}.") for m in modules
        ):
            misplaced.append(f"tests/unit/{relative}")
    assert not misplaced, (
        "a unit test lives in tests/unit/<package>/, named after the src/perflab package it "
        "tests (and imports), or in tests/unit/cross/ when it checks the repository as a whole; "
        "move with `git mv`: " + ", ".join(misplaced)
    )


def test_every_unit_folder_is_a_package() -> None:
    """Basenames repeat across folders (and tests/integration): each needs its own package."""
    folders = [p for p in UNIT.rglob("*") if p.is_dir() and "__pycache__" not in p.parts]
    bare = [
        f"tests/unit/{p.relative_to(UNIT)}" for p in folders if not (p / "__init__.py").is_file()
    ]
    assert not bare, "add an empty __init__.py to " + ", ".join(bare)


def test_no_unit_test_starts_a_process() -> None:
    spawning = []
    for path in _unit_modules():
        modules, names = _imported(path)
        if modules & SPAWNING or names & SPAWNING_NAMES:
            spawning.append(f"tests/unit/{path.relative_to(UNIT)}")
    assert not spawning, (
        "a unit test starts no process (use machine.proc's FakeRunner and captured output); "
        "a test that runs a real tool or interpreter goes in tests/integration, one that drives "
        "the perflab command in tests/cli: " + ", ".join(spawning)
    )
