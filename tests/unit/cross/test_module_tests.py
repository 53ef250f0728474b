"""Every module in src/perflab has unit tests found by its name: tests/unit/<package>/
test_<module>.py, or test_<module>_<topic>.py for a part (a top-level module's in
tests/unit/<module>/). test_layout.py checks the other direction, that every test file names a
module."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "perflab"
UNIT = ROOT / "tests" / "unit"

# modules with no test file of their own yet (most are tested through their callers, or in
# tests/integration where they drive a real tool or process); the list only shrinks: an entry
# whose module has gained a test file, or is gone, fails test_every_exemption_is_still_needed
WITHOUT_OWN_TESTS: frozenset[str] = frozenset(
    (
        "cli/changes.py",
        "cli/publish.py",
        "cli/run.py",
        "cli/stored.py",
        "cli/workflows/history/handler.py",
        "cli/workflows/shared.py",
        "cli/workflows/workflow.py",
        "lenses/asm/code_notes.py",
        "lenses/asm/elf_code.py",
        "lenses/asm/render.py",
        "lenses/asm/same_code.py",
        "lenses/instructions/details.py",
        "machine/started.py",
        "records/code_findings.py",
        "worker/build_reaper.py",
        "worker/callgrind_ops.py",
        "worker/command_launcher.py",
        "worker/peak_memory_ops.py",
        "worker/perflab_bench_plugin.py",
        "worker/statement_copies.py",
        "worker/statement_fork.py",
        "worker/statement_loop.py",
    )
)


def _modules() -> list[str]:
    """Each module under src/perflab (paths relative to it), leaving out __init__ and __main__."""
    return [
        p.relative_to(PACKAGE).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if not p.stem.startswith("__")
    ]


def _has_own_tests(module: str) -> bool:
    parts = Path(module).parts
    stem = Path(module).stem
    folder = UNIT.joinpath(*parts[:-1]) if len(parts) > 1 else UNIT / stem
    return any(
        p.stem == f"test_{stem}" or p.stem.startswith(f"test_{stem}_")
        for p in folder.glob("test_*.py")
    )


def test_every_module_has_a_test_file_named_after_it() -> None:
    untested = [m for m in _modules() if m not in WITHOUT_OWN_TESTS and not _has_own_tests(m)]
    assert not untested, "add tests/unit/<package>/test_<module>.py for: " + ", ".join(untested)


def test_every_exemption_is_still_needed() -> None:
    modules = set(_modules())
    stale = sorted(m for m in WITHOUT_OWN_TESTS if m not in modules or _has_own_tests(m))
    assert not stale, f"has a test file now, or is gone: remove from WITHOUT_OWN_TESTS: {stale}"


def test_the_check_sees_the_modules() -> None:
    # a walk that found nothing would pass the checks above vacuously
    assert "api.py" in _modules() and _has_own_tests("api.py")
