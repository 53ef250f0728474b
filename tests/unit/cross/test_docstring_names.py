"""Every perflab module or name that a docstring or comment in src/perflab names exists, so a
moved or split module cannot leave the code's own prose pointing at nothing. Checked in every
module, class and function docstring and every comment: a dotted `perflab.x.y`; a path from a
package of perflab or the repository's root (`store/sqlite.py`, `lenses/asm/`,
`measure/session.py:loops_per_variant`, `docs/json-format.md`) or from a package above the
one it is written in (`svg/flame.py` in report/); a file named without its folder
(`sampler.py`); a dotted name that starts with a package of perflab (`store.sqlite.SqliteStore`,
or a sibling module of that name); a backticked `module.name` whose module is one of perflab's
(`session.loops_per_variant`); a cross-reference (:func:`profile_diff.diff_profiles`). Each
resolves against the source tree read with ast (nothing is imported): modules, then the names a
module defines or imports, then a class's attributes (its own, its bases', what it sets on
`self`)."""

from __future__ import annotations

import ast
import builtins
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "perflab"
# perflab's own packages: a path or dotted name that starts with one is perflab's
PACKAGES = frozenset(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
# the folders at the repository's root a comment may name a file in
REPOSITORY_FOLDERS = frozenset({"tests", "scripts", "bench", "docs"})
# `perflab.toml`, `x.json`: files, not modules
FILE_SUFFIXES = frozenset({"toml", "db", "py", "md", "json", "html", "txt", "cfg", "ini", "svg"})

# (file under src/perflab, name): why the name may stand although it resolves to nothing here;
# an entry that no longer excuses a finding fails test_every_allowance_is_still_needed, so the
# list can only shrink
ALLOWED: dict[tuple[str, str], str] = {
    ("compat.py", "perflab.plan.bisect_search"): "an old module path, gone, that compat serves",
    ("lenses/asm/measure.py", "asm.functions"): "an artifact's name",
    ("stats/overload.py", "overload.action"): "a key of the JSON export",
    ("plan/pytest_suite.py", "test_sort.py"): "an example of pytest's node id",
    ("worker/statement_worker.py", "worker.timed"): "a lens op handler's argument",
    ("worker/statement_worker.py", "worker.reply"): "a lens op handler's argument",
    ("worker/statement_worker.py", "worker.traceback"): "a lens op handler's argument",
}

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
_ABSOLUTE = re.compile(rf"(?<![\w./-])(?:{_DOTTED})")
_PATH = re.compile(r"(?<![\w./-])(?:src/)?(?:perflab/)?[A-Za-z_]\w*/[\w/.-]*(?::\w+(?:\.\w+)*)?")
# a file named without its folder: `sampler.py`, `statement_worker.py:main`
_FILE = re.compile(r"(?<![\w./-])([A-Za-z_]\w*)\.py\b(?::(\w+))?")
# a backticked name alone: `session.loops_per_variant`, `decide()`
_SPAN = re.compile(rf"(?<!:)`({_DOTTED})(?:\(\))?`")
# a cross-reference, which names something even when its module is not found by name:
# :func:`profile_diff.diff_profiles`, :class:`~perflab.records.document.Section`, :func:`run`
_ROLE = re.compile(r":(?:func|class|meth|attr|data|obj|exc):`~?([A-Za-z_][\w.]*)`")


@dataclass(frozen=True)
class Prose:
    """One docstring or comment: where it is and its text."""

    path: Path
    line: int
    text: str


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in `body` and in the blocks nested in it (expressions are not walked)."""
    for statement in body:
        yield statement
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _prose(path: Path) -> Iterator[Prose]:
    tree = _tree(path)
    for node in (tree, *_statements(tree.body)):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str):
                yield Prose(path, first.lineno, first.value.value)
    with path.open() as source:
        for token in tokenize.generate_tokens(source.readline):
            if token.type == tokenize.COMMENT:
                yield Prose(path, token.start[0], token.string)


def _module_file(parts: tuple[str, ...]) -> Path | None:
    """The file of perflab's module `parts` (a package's `__init__.py`), if there is one."""
    path = PACKAGE.joinpath(*parts)
    if parts and path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def _bound(body: list[ast.stmt], package: tuple[str, ...]) -> dict[str, ast.AST | str]:
    """The names a module or class body binds, each with the node that binds it or, for an
    import, the dotted name it imports, looking into `if` and `try` blocks. `package` is the
    module's package, for relative imports."""
    names: dict[str, ast.AST | str] = {}
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[statement.name] = statement
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(statement, ast.ImportFrom):
            start = package[: len(package) - statement.level + 1] if statement.level else ()
            source = ".".join(("perflab", *start) if statement.level else ()) or ""
            source = ".".join(filter(None, (source, statement.module or "")))
            for alias in statement.names:
                names[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        names[name.id] = statement
        elif isinstance(statement, ast.If | ast.Try):
            blocks = [statement.body, statement.orelse]
            if isinstance(statement, ast.Try):
                blocks += [statement.finalbody, *(h.body for h in statement.handlers)]
            for block in blocks:
                names.update(_bound(block, package))
    return names


@dataclass(frozen=True)
class Found:
    """What a dotted name reached: a node in a module, or an outside name (not checked)."""

    node: ast.AST | None
    module: tuple[str, ...]


def _package_of(parts: tuple[str, ...]) -> tuple[str, ...]:
    path = _module_file(parts)
    return parts if path is not None and path.name == "__init__.py" else parts[:-1]


@cache
def _module_names(parts: tuple[str, ...]) -> dict[str, ast.AST | str]:
    path = _module_file(parts)
    assert path is not None
    return _bound(_tree(path).body, _package_of(parts))


def _lookup(module: tuple[str, ...], name: str, depth: int = 0) -> Found | None:
    """What `name` is in perflab's `module`, following imports; None when it is not there."""
    if _module_file((*module, name)) is not None:
        return Found(None, (*module, name))
    bound = _module_names(module).get(name)
    if not isinstance(bound, str):
        return None if bound is None else Found(bound, module)
    target = tuple(bound.split("."))
    if target[0] != "perflab" or depth > 5:
        return Found(None, ())  # an outside name: its attributes are not checked
    target = target[1:]
    if _module_file(target) is not None:
        return Found(None, target)
    found = _lookup(target[:-1], target[-1], depth + 1) if _module_file(target[:-1]) else None
    return found if found is not None else Found(None, ())


def _class_names(node: ast.ClassDef, module: tuple[str, ...]) -> set[str] | None:
    """A class's attributes: its body's names, what its methods assign to `self` and its bases'
    attributes; None when a base is not perflab's (anything may come from it)."""
    names = set(_bound(node.body, ()))
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store):
            if isinstance(inner.value, ast.Name) and inner.value.id == "self":
                names.add(inner.attr)
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        if not isinstance(base, ast.Name):
            return None
        if base.id in {"Generic", "Protocol"}:
            continue
        found = _lookup(module, base.id)
        if found is None and isinstance(getattr(builtins, base.id, None), type):
            names |= set(dir(getattr(builtins, base.id)))  # Exception, object: known attributes
            continue
        if found is None or not isinstance(found.node, ast.ClassDef):
            return None
        inherited = _class_names(found.node, found.module)
        if inherited is None:
            return None
        names |= inherited
    return names


def _attribute_problem(module: tuple[str, ...], rest: tuple[str, ...]) -> str | None:
    """Why `rest` is not a name (then its attribute ...) in perflab's `module`; None when it is."""
    found: Found | None = Found(None, module)
    for attribute in rest:
        assert found is not None
        if found.node is None:
            if not found.module:
                return None  # an outside name: not checked
            where = found.module
            found = _lookup(where, attribute)
            if found is None:
                return f"{attribute} is not in perflab.{'.'.join(where)}"
            continue
        if not isinstance(found.node, ast.ClassDef):
            return None  # a function's or a value's attribute: not checked
        names = _class_names(found.node, found.module)
        if names is None:
            return None
        if attribute not in names:
            owner = ".".join(found.module)
            return f"{attribute} is not in class {found.node.name} of perflab.{owner}"
        inner = _bound(found.node.body, ()).get(attribute)
        if not isinstance(inner, ast.ClassDef):
            return None
        found = Found(inner, found.module)
    return None


def dotted_problem(parts: tuple[str, ...]) -> str | None:
    """Why perflab's `parts` (without `perflab`) names nothing; None when it names something."""
    if parts and parts[-1] in FILE_SUFFIXES:
        return None
    for end in range(len(parts), -1, -1):
        module = _module_file(parts[:end])
        if module is None:
            continue
        return _attribute_problem(parts[:end], parts[end:]) if parts[end:] else None
    return "no such module"


@cache
def _modules_named() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Each last part of a module's dotted name, with the modules that end in it."""
    named: dict[str, list[tuple[str, ...]]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            named.setdefault(parts[-1], []).append(parts)
    return {name: tuple(modules) for name, modules in named.items()}


def short_problem(parts: tuple[str, ...]) -> str | None:
    """Why `module.name`, with `module` one of perflab's by its last part, names nothing; None
    when one such module defines it or the first part is no module of perflab's."""
    modules = _modules_named().get(parts[0])
    if not modules:
        return None
    problems = [dotted_problem(module + parts[1:]) for module in modules]
    return None if None in problems else problems[0]


@cache
def _classes() -> dict[str, tuple[tuple[ast.ClassDef, tuple[str, ...]], ...]]:
    """Each class name in perflab, with its classes (node, module) of that name."""
    named: dict[str, list[tuple[ast.ClassDef, tuple[str, ...]]]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = path.relative_to(PACKAGE).with_suffix("").parts
        module = module[:-1] if module[-1] == "__init__" else module
        for statement in _statements(_tree(path).body):
            if isinstance(statement, ast.ClassDef):
                named.setdefault(statement.name, []).append((statement, module))
    return {name: tuple(classes) for name, classes in named.items()}


def class_problem(parts: tuple[str, ...]) -> str | None:
    """Why `Class.attribute`, with `Class` one of perflab's by name, names nothing."""
    for node, module in _classes()[parts[0]]:
        names = _class_names(node, module)
        if names is None or parts[1] in names:
            return None
    return f"no class {parts[0]} has {parts[1]}"


@cache
def _module_level() -> dict[str, tuple[str, ...]]:
    """Each function or class at a module's top in perflab, with the modules defining it."""
    named: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for statement in _tree(path).body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                named.setdefault(statement.name, []).append(path.relative_to(PACKAGE).as_posix())
    return {name: tuple(paths) for name, paths in named.items()}


def span_problem(parts: tuple[str, ...]) -> str | None:
    """Why a backticked `first.name` names nothing: `first` is one of perflab's modules or
    classes that lacks `name`, or no module although `name` is a function or class of perflab's
    (a module renamed: `callgrind_count.CallgrindCounter`); None otherwise (a variable)."""
    if parts[0] in _modules_named():
        return short_problem(parts)
    if parts[0] in _classes():
        return class_problem(parts)
    if parts[1] in _module_level() and parts[0].islower():
        homes = " or ".join(_module_level()[parts[1]])
        return f"no module named {parts[0]} ({parts[1]} is in {homes})"
    return None


@cache
def _defined_anywhere() -> frozenset[str]:
    """Every name a module of perflab's, or a class in it, binds."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for statement in (_tree(path), *_statements(_tree(path).body)):
            if isinstance(statement, ast.Module | ast.ClassDef):
                names.update(_bound(statement.body, ()))
    return frozenset(names)


def role_problem(parts: tuple[str, ...]) -> str | None:
    """Why a cross-reference (:func:`x.y`) names nothing: its module must be one of
    perflab's, and a bare name must be defined somewhere in perflab."""
    if parts[0] == "perflab":
        return dotted_problem(parts[1:])
    if len(parts) == 1:
        return None if parts[0] in _defined_anywhere() else f"{parts[0]} is defined nowhere"
    if parts[0] not in _modules_named() and parts[0] not in PACKAGES:
        return f"no module named {parts[0]}"
    return short_problem(parts) if parts[0] in _modules_named() else dotted_problem(parts)


def path_problem(name: str) -> str | None:
    """Why a path (`store/sqlite.py:SqliteStore`, `lenses/asm/`, `budget/plan`) names nothing."""
    path, _, attribute = name.removeprefix("src/").removeprefix("perflab/").partition(":")
    path = path.rstrip(".")
    if path.split("/")[0] in REPOSITORY_FOLDERS:
        return None if (ROOT / path).exists() else "does not exist"
    folder = PACKAGE / path
    if folder.is_dir() and not attribute:
        return None
    if path.endswith(".py"):
        if not folder.is_file():
            return "does not exist"
        parts = tuple(Path(path).with_suffix("").parts)
    else:
        # a module without its .py, perhaps followed by a name in it: `budget/costs.learned_costs`
        head, _, last = path.rpartition("/")
        parts = (*head.split("/"), *last.split("."))
    rest = tuple(attribute.split(".")) if attribute else ()
    return dotted_problem(parts + rest)


@cache
def _files_named() -> dict[str, tuple[Path, ...]]:
    """Each Python file's name in the repository's code, with the files of that name."""
    named: dict[str, list[Path]] = {}
    for folder in ("src", *REPOSITORY_FOLDERS):
        for path in (ROOT / folder).rglob("*.py"):
            named.setdefault(path.name, []).append(path)
    return {name: tuple(paths) for name, paths in named.items()}


def file_problem(stem: str, attribute: str | None) -> str | None:
    """Why `stem.py` (perhaps `:attribute` in it), named without its folder, names nothing."""
    paths = _files_named().get(f"{stem}.py")
    if not paths:
        return "no such file"
    modules = [p.relative_to(PACKAGE).with_suffix("").parts for p in paths if PACKAGE in p.parents]
    if not attribute or not modules:
        return None
    problems = [
        dotted_problem(tuple(m[:-1] if m[-1] == "__init__" else m) + (attribute,)) for m in modules
    ]
    return None if None in problems else problems[0]


def package_problem(parts: tuple[str, ...], package: tuple[str, ...]) -> str | None:
    """Why `parts`, which starts with a package of perflab's name, names nothing: it may be
    a module beside the one it is written in (`analyse.decide` in a lens is its own analyse)."""
    for depth in range(len(package), 0, -1):
        if _module_file((*package[:depth], parts[0])) and not dotted_problem(
            package[:depth] + parts
        ):
            return None
    return dotted_problem(parts)


def named(text: str, package: tuple[str, ...] = ()) -> Iterator[tuple[str, str | None]]:
    """Each perflab name in a docstring's or comment's text written in `package`, with why it
    names nothing (None when it names something)."""
    paths = []
    for found in _PATH.findall(text):
        found = found.rstrip(".-")
        first = found.removeprefix("src/").removeprefix("perflab/").split("/")[0]
        if found.startswith("src/perflab/") or first in PACKAGES | REPOSITORY_FOLDERS:
            paths.append(found)
            yield found, path_problem(found)
            continue
        # from a package above the one it is written in: `asm/sources.py` in lenses/profile/
        above = [package[:d] for d in range(len(package), 0, -1)]
        home = next((p for p in above if PACKAGE.joinpath(*p, first).exists()), None)
        if home is not None:
            paths.append(found)
            yield found, path_problem("/".join((*home, found)))
    for stem, attribute in _FILE.findall(text):
        if not any(f"/{stem}.py" in path for path in paths):
            yield f"{stem}.py", file_problem(stem, attribute or None)
    for found in _ABSOLUTE.findall(text):
        parts = tuple(found.split("."))
        if parts[0] == "perflab":
            yield found, dotted_problem(parts[1:])
        elif parts[0] in PACKAGES and not any(found in path for path in paths):
            yield found, package_problem(parts, package)
        elif parts[0] in _classes():
            yield found, class_problem(parts)
    for found in _SPAN.findall(text):
        parts = tuple(found.split("."))
        if parts[0] != "perflab" and parts[0] not in PACKAGES | _classes().keys():
            yield found, span_problem(parts)
    for found in _ROLE.findall(text):
        yield found, role_problem(tuple(found.split(".")))


@dataclass(frozen=True)
class Finding:
    """A name in the code's prose that resolves to nothing."""

    file: str  # under src/perflab
    line: int
    name: str
    why: str


@cache
def findings() -> tuple[Finding, ...]:
    """Every name that names nothing, allowed or not (read once for both tests below)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).with_suffix("").parts
        for prose in _prose(path):
            for name, why in named(prose.text, module[:-1]):
                if why is not None:
                    found.append(
                        Finding(path.relative_to(PACKAGE).as_posix(), prose.line, name, why)
                    )
    return tuple(found)


def stale() -> list[str]:
    return [
        f"src/perflab/{f.file}:{f.line}: {f.name}: {f.why}"
        for f in findings()
        if (f.file, f.name) not in ALLOWED
    ]


def test_every_perflab_name_in_docstrings_and_comments_exists() -> None:
    found = stale()
    assert not found, "the code's prose names what is not there (moved?):\n" + "\n".join(found)


def test_every_allowance_is_still_needed() -> None:
    excused = {(f.file, f.name) for f in findings()}
    unneeded = [f"{file}: {name}" for file, name in ALLOWED if (file, name) not in excused]
    assert not unneeded, "these names resolve now (or are gone): drop them from ALLOWED: " + (
        ", ".join(unneeded)
    )


def test_the_check_finds_what_is_gone() -> None:
    text = " ".join(
        [
            "`store/sqlite.py`, perflab.store.sqlite, store/sqlite.py:SqliteStore, sampler.py,",
            "`lenses/asm/`, `perflab.toml`, stats.paired, records.errors.ConfigError.hint,",
            "`session.loops_per_variant`, `result.value` (a variable), tests/unit/cross/,",
            "ConfigError.hint, `Figures.paired_units`,",
            ":func:`profile_diff.diff_profiles`, :class:`~perflab.records.document.Section`,",
            ":func:`analyse_run`, docs/json-format.md",
        ]
    )
    assert [name for name, why in named(text) if why] == []
    assert [why for _, why in named("svg/flame.py, svg/gone.py, and/or", ("report",))] == [
        None,
        "does not exist",
    ]
    gone = " ".join(
        [
            "`store/nothing.py`, perflab.store.nothing, store/sqlite.py:no_such_function,",
            "records.errors.ConfigError.no_such_field, `session.no_such_name`, `lenses/nothing/`,",
            "tests/unit/nothing/test_x.py, no_such_module.py, :func:`perf_profile.diff_profiles`,",
            ":func:`no_such_function`, ConfigError.no_such_field,",
            "`callgrind_count.CallgrindCounter`",
        ]
    )
    assert [name for name, why in named(gone) if why] == [
        "store/nothing.py",
        "store/sqlite.py:no_such_function",
        "lenses/nothing/",
        "tests/unit/nothing/test_x.py",
        "no_such_module.py",
        "perflab.store.nothing",
        "records.errors.ConfigError.no_such_field",
        "ConfigError.no_such_field",
        "session.no_such_name",
        "callgrind_count.CallgrindCounter",
        "perf_profile.diff_profiles",
        "no_such_function",
    ]
