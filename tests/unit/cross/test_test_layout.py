"""What tests share lives in tests/support/ (docs/architecture.md, "Tests"): a test file imports
no other test file, so each can change or go without breaking another, and a reader finds the
builders and fakes in one package instead of inside the tests that first needed them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"
# what pytest itself needs at tests/ root: the package marker and the suite's fixtures and hooks
ROOT_MODULES = frozenset({"__init__.py", "conftest.py"})


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _imported_modules(path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved (`from .x import y` in tests/a/
    is tests.a.x, and tests.a.x.y too, since y may be a module)."""
    package = _module_of(path).rpartition(".")[0].split(".")
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            anchor = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*anchor, *([node.module] if node.module else [])])
            modules.add(base)
            modules.update(f"{base}.{alias.name}" for alias in node.names)
    return modules


def test_no_test_file_imports_another_test_file() -> None:
    test_modules = {_module_of(path) for path in _test_files()}
    crossing = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in _test_files()
        for module in sorted(_imported_modules(path) & test_modules)
        if module != _module_of(path)
    ]
    assert not crossing, (
        "move what test files share into a module of tests/support/ named after what it builds "
        "(support/callgrind_texts.py), and import it from there:\n  " + "\n  ".join(crossing)
    )


def test_no_module_imports_a_conftest() -> None:
    """pytest loads a conftest itself, as a plugin: imported again by name it may run twice,
    and its fixtures and hooks are not a library."""
    importing = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted(TESTS.rglob("*.py"))
        if "__pycache__" not in path.parts
        for module in sorted(_imported_modules(path))
        if module.rpartition(".")[2] == "conftest"
    ]
    assert not importing, (
        "move what a conftest shares into a helper module (tests/support/, or one beside the "
        "conftest) and import it from there:\n  " + "\n  ".join(importing)
    )


def test_no_helper_module_sits_loose_at_the_tests_root() -> None:
    loose = sorted(p.name for p in TESTS.glob("*.py") if p.name not in ROOT_MODULES)
    assert not loose, "`git mv` these to tests/support/: " + ", ".join(loose)


def test_the_support_package_holds_no_tests() -> None:
    """pytest does not collect tests/support/ (no test_*.py there), so a test written there
    would never run."""
    tests = [
        f"{path.relative_to(ROOT)}: {node.name}"
        for path in sorted(SUPPORT.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    ]
    named = sorted(p.name for p in SUPPORT.rglob("test_*.py"))
    assert not tests and not named, "move into a test file: " + ", ".join(tests + named)
