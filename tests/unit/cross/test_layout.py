"""Where a unit test lives (docs/architecture.md, "Tests"): tests/unit mirrors src/perflab, so
the tests of a module are found without searching, and a unit test starts no process, so
tests/unit stays fast and runs anywhere; a test that needs a real process belongs in
tests/integration (tests/cli when it drives the perflab command)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "tests" / "unit"
SRC = ROOT / "src" / "perflab"
# tests of the repository as a whole (layers, docs, bench scripts), not of one package
CROSS = "cross"
# the records are the vocabulary every layer speaks (a test builds its inputs from them), so they
# say what a test is about only when it imports nothing else of perflab
VOCABULARY = "records"
# the lenses' tests are split one folder per lens: the lens packages are mirrored one level down
NESTED = frozenset({"lenses"})
# modules that start processes (tests/support's git, perflab and PostgreSQL helpers); a unit
# test uses fake_processes' FakeRunner instead
SPAWNING = frozenset(
    {
        "subprocess",
        "multiprocessing",
        "tests.support.cli_commands",
        "tests.support.git_repo",
        "tests.support.merged_repo",
        "tests.support.postgres_server",
    }
)
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


def _home(dotted: str) -> tuple[str, ...]:
    """The src/perflab folders (and module) a dotted name lies in: `perflab.lenses.time.analyse.X`
    is ("lenses", "time", "analyse"); () outside perflab."""
    parts = dotted.split(".")
    if parts[0] != "perflab":
        return ()
    home: list[str] = []
    here = SRC
    for part in parts[1:]:
        if (here / part).is_dir():
            home.append(part)
            here = here / part
            continue
        if (here / f"{part}.py").is_file():
            home.append(part)
        break
    return tuple(home)


def _subject(path: Path) -> str | None:
    """The module a file declares it tests (`SUBJECT = "perflab.x.y"` at module level)."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "SUBJECT" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def _imported_homes(path: Path) -> Counter[tuple[str, ...]]:
    """How many names a file imports from each perflab module (a plain import counts one)."""
    homes: Counter[tuple[str, ...]] = Counter()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            homes.update(_home(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            homes.update(_home(f"{node.module}.{alias.name}") for alias in node.names)
    del homes[()]
    return homes


def _most(homes: Counter[tuple[str, ...]], within: tuple[str, ...] = ()) -> set[str]:
    """The folders (or modules) right below src/perflab/<within> that most imported names lie in."""
    counts: Counter[str] = Counter()
    for home, n in homes.items():
        if len(home) > len(within) and home[: len(within)] == within:
            counts[home[len(within)]] += n
    if not within and set(counts) - {VOCABULARY}:
        del counts[VOCABULARY]
    top = max(counts.values(), default=0)
    return {name for name, n in counts.items() if n == top}


def _homes(homes: Counter[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The folders under tests/unit a test with these imports may live in (ties allowed): its
    package's, and for a lens, its lens's; the lenses' shared machinery stays in lenses/."""
    allowed: set[tuple[str, ...]] = set()
    for package in _most(homes):
        inner = _most(homes, (package,)) if package in NESTED else set()
        lenses = {(package, name) for name in inner if (SRC / package / name).is_dir()}
        allowed |= lenses if lenses and len(lenses) == len(inner) else {(package,), *lenses}
    return allowed


def _mirror(home: tuple[str, ...]) -> tuple[str, ...]:
    """The tests/unit folder of a perflab module or package: a package's own, a module's
    package's; a module right under src/perflab (`api`) gets a folder of its own name, since
    tests/unit's root holds folders only."""
    if (SRC.joinpath(*home)).is_dir() or len(home) == 1:
        return home
    return home[:-1]


def _below(folders: tuple[str, ...], home: tuple[str, ...]) -> bool:
    """Whether a folder is a package's or one of its subpackages' (a lens's never counts as
    the lenses' folder: the lenses are mirrored one level down already)."""
    if folders == home:
        return True
    return home[0] not in NESTED and folders[: len(home)] == home


def _misfiled(path: Path) -> str | None:
    """Where a misfiled test belongs, None when it is where it belongs."""
    folders = path.relative_to(UNIT).parts[:-1]
    subject = _subject(path)
    home = _home(subject) if subject else ()
    if subject and len(home) != subject.count("."):
        return (
            f"tests/unit/{'/'.join(folders)}/{path.name}: SUBJECT {subject!r} is no perflab module"
        )
    allowed = {_mirror(home)} if home else _homes(_imported_homes(path))
    if any(_below(folders, home) for home in allowed):
        return None
    where = " or ".join(f"tests/unit/{'/'.join(home)}/" for home in sorted(allowed))
    return f"tests/unit/{'/'.join(folders)}/{path.name} -> " + (
        where or "? (it imports nothing of perflab: declare SUBJECT)"
    )


def test_every_unit_test_lives_in_the_folder_of_the_package_it_tests() -> None:
    misfiled = [
        line
        for path in _unit_modules()
        if path.relative_to(UNIT).parts[0] != CROSS and (line := _misfiled(path)) is not None
    ]
    assert not misfiled, (
        "a unit test lives in tests/unit/<package>/ (a lens's in tests/unit/lenses/<lens>/), the "
        "src/perflab package whose names it imports most (the records count only when it imports "
        "nothing else) or a subpackage of it, or in tests/unit/cross/ when it checks the "
        "repository as a whole; one that tests a module through others' names says so with "
        'SUBJECT = "perflab.x.y" and lives in the folder of that module\'s package. '
        "Move with `git mv` (or declare SUBJECT):\n  " + "\n  ".join(misfiled)
    )


# files that still test several modules under one name, each until it is split by module
SEVERAL_MODULES: dict[str, str] = {}


def _modules_named(folders: tuple[str, ...]) -> dict[str, str]:
    """The modules a test file in tests/unit/<folders>/ may be named after, each with its dotted
    name: the modules of the mirrored package, and the package itself (its __init__) under the
    folder's own name; in a top-level module's folder (`api/`), that module alone."""
    if not folders:  # tests/unit's root: no package (the folder test names where it belongs)
        return {}
    package = "perflab." + ".".join(folders)
    here = SRC.joinpath(*folders)
    if not here.is_dir():
        return {folders[-1]: package} if (SRC / f"{folders[-1]}.py").is_file() else {}
    named = {folders[-1]: package}
    named.update((p.stem, f"{package}.{p.stem}") for p in here.glob("*.py") if p.stem[0] != "_")
    return named


def _imports_module(path: Path, dotted: str) -> bool:
    """Whether a file imports a module by its own name (`from perflab.publish import x`,
    `from perflab import api`), not only through its submodules."""
    modules, _ = _imported(path)
    parent, _, name = dotted.rpartition(".")
    return dotted in modules or any(
        isinstance(node, ast.ImportFrom)
        and node.module == parent
        and any(alias.name == name for alias in node.names)
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
    )


def _misnamed(path: Path) -> str | None:
    """Why a test file's name is not test_<module>[_<topic>].py for the module it tests, None
    when it is."""
    folders = path.relative_to(UNIT).parts[:-1]
    named = _modules_named(folders)
    stem = path.stem.removeprefix("test_")
    fits = [m for m in named if stem == m or stem.startswith(f"{m}_")]
    where = f"tests/unit/{'/'.join(folders)}/{path.name}"
    if not fits:
        return f"{where}: no module of {'.'.join(('perflab', *folders))} is named {stem!r}"
    module = named[max(fits, key=len)]
    subject = _subject(path)
    if subject and subject != module:
        return f"{where}: named after {module} but SUBJECT is {subject}"
    if module.endswith(f".{folders[-1]}") and not subject and not _imports_module(path, module):
        return f"{where}: named after the package {module} but imports only its modules"
    return None


def test_every_unit_test_is_named_after_the_module_it_tests() -> None:
    """tests/unit/<package>/test_<module>.py holds the tests of src/perflab/<package>/<module>.py
    (test_<module>_<topic>.py a part of them, test_<package>.py those of the package's own
    names), so the tests of a module are found by its name."""
    misnamed = {}
    for path in _unit_modules():
        relative = path.relative_to(UNIT)
        if relative.parts[0] != CROSS and (why := _misnamed(path)) is not None:
            misnamed[relative.as_posix()] = why
    unnamed = sorted(set(misnamed) - set(SEVERAL_MODULES))
    assert not unnamed, (
        "name a unit test file test_<module>.py after the module of its folder's package that it "
        "tests (test_<module>_<topic>.py for a part; split a file that tests several modules) "
        "and make its SUBJECT, if any, that module:\n  "
        + "\n  ".join(misnamed[name] for name in unnamed)
    )
    stale = sorted(set(SEVERAL_MODULES) - set(misnamed))
    assert not stale, "split or renamed since, leave them out of SEVERAL_MODULES: " + ", ".join(
        stale
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
        "a unit test starts no process (use fake_processes.FakeRunner and captured output); "
        "a test that runs a real tool or interpreter goes in tests/integration, one that drives "
        "the perflab command in tests/cli: " + ", ".join(spawning)
    )


def test_no_unit_test_imports_a_private_name() -> None:
    """A unit test reaches perflab through public names: a private one may be renamed or
    folded away at will, and a rule worth a test is worth a name."""
    private = []
    for path in _unit_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perflab"):
                hidden = [a.name for a in node.names if a.name.startswith("_")]
                hidden = [n for n in hidden if not (n.startswith("__") and n.endswith("__"))]
                private += [f"tests/unit/{path.relative_to(UNIT)}: {name}" for name in hidden]
    assert not private, "imported by a unit test, give it a public name: " + ", ".join(private)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# calls that replace an attribute by name (monkeypatch's, the builtins, unittest.mock's)
REPLACING = frozenset({"setattr", "delattr", "patch", "patch.object"})
# calls that read an attribute by name
READING = frozenset({"getattr", "hasattr"})


def _called(call: ast.Call) -> str:
    """`setattr` for `monkeypatch.setattr(...)` and `setattr(...)`, `patch.object` for
    `mock.patch.object(...)`."""
    text = ast.unparse(call.func)
    return "patch.object" if text.endswith("patch.object") else text.rsplit(".", 1)[-1]


def _reached(tree: ast.AST) -> list[str]:
    """The private names a test file reads (`x._y`, whatever `x` is: a module, a class, an
    instance, a module loaded by path) or names in a call that reads or replaces one, and
    the replacements whose name is not written out (the check could not read it)."""
    reached = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            reached.append(f"line {node.lineno}: {ast.unparse(node)}")
        if not isinstance(node, ast.Call) or (called := _called(node)) not in REPLACING | READING:
            continue
        texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
        names = [t.rsplit(".", 1)[-1] for t in texts if isinstance(t, str)]
        reached += [f"line {node.lineno}: {name}" for name in names if _private(name)]
        if called in REPLACING and not names:
            reached.append(
                f"line {node.lineno}: {ast.unparse(node.func)}() of a name not written out"
            )
    return reached


def test_no_unit_test_replaces_or_reads_a_private_name() -> None:
    """A unit test changes what perflab does through parameters and public defaults (a clock,
    a runner, a memory passed in) and checks what it did through public names, not by
    replacing or reading private ones: those may be renamed or folded away, and the seam a
    test needs is worth a name. A test's own stand-ins keep their state public for the same
    check to hold, and a replaced name is written out so that the check can read it."""
    private = []
    for path in _unit_modules():
        tree = ast.parse(path.read_text(), str(path))
        private += [f"tests/unit/{path.relative_to(UNIT)} {name}" for name in _reached(tree)]
    assert not private, "reached by a unit test, give it a public seam:\n  " + "\n  ".join(private)


def test_no_test_imports_another_tests_private_name() -> None:
    """What tests share has a public name (in a module of tests/support/): a private helper is
    its own file's, free to change."""
    private = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests"):
                hidden = [a.name for a in node.names if a.name.startswith("_")]
                hidden = [n for n in hidden if not (n.startswith("__") and n.endswith("__"))]
                private += [f"{path.relative_to(ROOT)}: {node.module}.{name}" for name in hidden]
    assert not private, "imported from another test, give it a public name: " + ", ".join(private)
