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


# folders with a helper library of their own: the corpus's harness scores known-answer cases
# and is its own program (shrink-only)
OWN_HELPERS = frozenset({"corpus"})


def test_helper_modules_live_in_tests_support() -> None:
    """A second helper package beside tests/support/ grows its own launcher, tag and settings
    (tests/faults had two of each)."""
    loose = sorted(
        str(path.relative_to(ROOT))
        for path in TESTS.rglob("*.py")
        if "__pycache__" not in path.parts
        and path.parent != TESTS
        and path.relative_to(TESTS).parts[0] not in {"support", *OWN_HELPERS}
        and not path.name.startswith("test_")
        and path.name not in ROOT_MODULES
    )
    assert not loose, "`git mv` these to tests/support/: " + ", ".join(loose)


# helpers that write perflab's command line themselves, each with its reason (shrink-only)
OWN_LAUNCHERS = {
    # each way a user starts perflab (the script, `-m perflab`, `-m perflab.cli.main`) is the
    # subject
    "tests/cli/test_interrupted_exit_cli.py::_entries",
}


# built, so that this file's own helper does not read as a launcher
_ENTRY = ".".join(("perflab", "cli", "main"))


def _launchers(path: Path) -> list[str]:
    """The helper functions (not tests) in `path` whose code names `python -m perflab...`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("test_"):
            continue
        words = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
        if _ENTRY in words or {"-m", _ENTRY.partition(".")[0]} <= words:
            found.append(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def test_perflab_is_launched_through_tests_support() -> None:
    """One launcher (support/cli_commands.perflab, start_perflab and COMMAND) says how a test
    runs perflab, its timeout and which of the developer's variables it drops; a test file's
    helper calls it with the test's own words."""
    launchers = {launcher for path in _test_files() for launcher in _launchers(path)}
    own = sorted(launchers - OWN_LAUNCHERS)
    assert not own, "call tests/support/cli_commands.perflab instead:\n  " + "\n  ".join(own)
    assert OWN_LAUNCHERS <= launchers, "remove from OWN_LAUNCHERS: " + ", ".join(
        sorted(OWN_LAUNCHERS - launchers)
    )


# module constants that say how short a test's run is: support/cli_commands.FAST and QUICK
# and support/fast_settings.FAST and MINIMUM_DESIGN; these differ, each with its reason
OWN_SETTINGS = {
    "tests/golden/test_notes_apply.py",  # make_experiment's keywords, not a Settings
}


def test_run_settings_come_from_tests_support() -> None:
    named = sorted(
        f"{path.relative_to(ROOT)}: {target.id}"
        for path in _test_files()
        if str(path.relative_to(ROOT)) not in OWN_SETTINGS
        for node in ast.parse(path.read_text(), str(path)).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in {"FAST", "QUICK"}
    )
    assert not named, "import these from tests/support/cli_commands or fast_settings: " + (
        ", ".join(named)
    )
