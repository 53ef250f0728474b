"""No lens imports another lens: what two lenses share lives in `perflab.measure` (or lower), so
that a lens can be read, changed and removed on its own. The catalogue modules directly under
`perflab.lenses` (descriptor, registry, fragments, sections) are every lens's, not one lens's.
Parsed from the source like the layer test, lazy imports included."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from perflab.records.kinds import Metric
from tests.support.source_imports import MODULES, imports_of

# Known crossings, lens -> lens, each with the change that removes it. The test fails when one
# disappears, so this list can only shrink.
PENDING: dict[tuple[str, str], str] = {}


def lens_of(module: str) -> str | None:
    """The lens package a module belongs to, or None outside every lens package."""
    parts = module.split(".")
    if parts[:2] != ["perflab", "lenses"] or len(parts) < 3:
        return None
    package = ".".join(parts[:3])
    if MODULES[package].name != "__init__.py":
        return None  # lenses/descriptor.py, registry.py ...: the catalogue
    return parts[2]


def _crossings() -> dict[tuple[str, str], list[str]]:
    """(lens, other lens) -> the imports from one into the other."""
    found: dict[tuple[str, str], list[str]] = {}
    for module in MODULES:
        lens = lens_of(module)
        for target in sorted(imports_of(module)) if lens is not None else ():
            other = lens_of(target) if target in MODULES else None
            if other is not None and other != lens:
                found.setdefault((lens, other), []).append(f"{module} imports {target}")
    return found


def test_no_lens_imports_another_lens() -> None:
    crossings = sorted(
        line for pair, lines in _crossings().items() if pair not in PENDING for line in lines
    )
    assert not crossings, "\n".join(crossings)


def test_pending_crossings_still_exist() -> None:
    """Remove an entry from PENDING once its import is gone."""
    gone = [f"{a} -> {b}" for a, b in PENDING if (a, b) not in _crossings()]
    assert not gone, "no longer imported, remove from PENDING: " + ", ".join(gone)


def test_no_cost_model_reaches_the_registry() -> None:
    """A lens made of other lenses' measurements declares them (`cost_parts`) and the plan
    combines their models: a cost module that imported the registry would close a cycle."""
    reaching = [
        module
        for module in MODULES
        if module.startswith("perflab.lenses.")
        and module.endswith(".cost")
        and "perflab.lenses.registry" in imports_of(module)
    ]
    assert not reaching


def test_shared_analysis_imports_no_lens() -> None:
    """`perflab.analyse` joins what the lenses found through their descriptors (the catalogue):
    a module there that imported one lens's package would hold that lens's knowledge."""
    naming = [
        f"{module} imports {target}"
        for module in MODULES
        if module == "perflab.analyse" or module.startswith("perflab.analyse.")
        for target in sorted(imports_of(module))
        if target in MODULES and lens_of(target) is not None
    ]
    assert not naming, "\n".join(naming)


# outside tools one lens drives: shared analysis says them only in that lens's words
LENS_TOOLS = ("valgrind", "callgrind", "objdump")
# names shared analysis keeps in a string although they hold a lens's tool, each with why; an
# entry no string holds any more fails test_every_kept_name_is_still_needed, so the list can only
# shrink
KEPT_NAMES: dict[str, str] = {}


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the module's, classes' and functions' docstring nodes."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _lens_words(module: str, lenses: set[str], *, tools: bool = True) -> Iterator[str]:
    """Where `module` names one lens: a built-in metric constant (`Metric.TIME`), a lens's tool
    in any string (unless `tools` is False), or "<lens> lens" in a string that is not a
    docstring."""
    constants = {name for name, value in vars(Metric).items() if isinstance(value, Metric)}
    tree = ast.parse(MODULES[module].read_text())
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Metric"
            and node.attr in constants
        ):
            yield f"{module}:{node.lineno}: Metric.{node.attr}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.lower()
            for kept in KEPT_NAMES:
                text = text.replace(kept, "")
            named = [tool for tool in LENS_TOOLS if tools and tool in text]
            if id(node) not in docstrings:
                named += [f"{lens} lens" for lens in sorted(lenses) if f"{lens} lens" in text]
            yield from (f"{module}:{node.lineno}: {word!r}" for word in named)


def _shared_analysis() -> list[str]:
    return [m for m in MODULES if m == "perflab.analyse" or m.startswith("perflab.analyse.")]


def test_every_kept_name_is_still_needed() -> None:
    strings = [
        node.value.lower()
        for module in _shared_analysis()
        for node in ast.walk(ast.parse(MODULES[module].read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    unneeded = [kept for kept in KEPT_NAMES if not any(kept in text for text in strings)]
    assert not unneeded, "no string holds these now, drop them from KEPT_NAMES: " + ", ".join(
        unneeded
    )


def test_shared_analysis_names_no_lens() -> None:
    """`perflab.analyse` asks the descriptors which lens does what (measures wall time, counts
    under a tool that hides CPU features, reads where code lies) and says what a lens cannot
    see in that lens's words: naming one lens's metric or tool would hold its knowledge.
    Comments may state a rule with an example; they are not parsed."""
    lenses = {lens for module in MODULES if (lens := lens_of(module)) is not None}
    found = [line for module in _shared_analysis() for line in _lens_words(module, lenses)]
    assert not found, "\n".join(found)


# the packages between the lenses and the user that ask the descriptors rather than name a lens
# (a shared tool such as valgrind is theirs to drive: measure/callgrind, the engine's caches)
CENTRAL_PACKAGES = ("perflab.plan", "perflab.engine", "perflab.report", "perflab.measure")
# modules there that still name a lens, each with why; shrink-only
# (test_every_central_exception_is_still_needed)
NAMES_A_LENS: dict[str, str] = {}


def _central_lens_words() -> dict[str, list[str]]:
    lenses = {lens for module in MODULES if (lens := lens_of(module)) is not None}
    found: dict[str, list[str]] = {}
    for module in MODULES:
        inside = tuple(f"{package}." for package in CENTRAL_PACKAGES)
        if module in CENTRAL_PACKAGES or module.startswith(inside):
            words = list(_lens_words(module, lenses, tools=False))
            if words:
                found[module] = words
    return found


def test_central_packages_name_no_lens() -> None:
    """plan/, engine/, report/ and measure/ ask the descriptors (`registry.wall_time_metrics`,
    `alone_metrics` ...) which lens does what; naming one there holds its knowledge outside it,
    so a new lens cannot opt in without editing them."""
    found = _central_lens_words()
    unexplained = [line for m, lines in found.items() if m not in NAMES_A_LENS for line in lines]
    assert not unexplained, "\n".join(unexplained)


def test_every_central_exception_is_still_needed() -> None:
    unneeded = set(NAMES_A_LENS) - set(_central_lens_words())
    assert not unneeded, "these name no lens now, drop them from NAMES_A_LENS: " + ", ".join(
        sorted(unneeded)
    )
