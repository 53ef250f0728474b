"""One-way imports: a module imports only modules of its own layer or of lower ones, and the
renderers, the store and the shared measuring code never reach the engine, the API, the CLI or a
lens (docs/architecture.md, "Layers"). Parsed from the source (ast), so a lazy import inside a
function counts too; imports under `if TYPE_CHECKING:` do not (they never run), except in
records/: a record whose annotation names a type from above is vocabulary living in the wrong
layer, so there they count too."""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Iterator

import pytest

from tests.support.source_imports import MODULES, PENDING, imports_of

# lowest first; a module belongs to the layer of its longest matching prefix
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the folders are the layers: each names whole packages (a lens package is split by
    # layer_of's rule: its descriptor, name, cost model and options below measure/, the rest
    # above)
    # what is measured and decided, as data: imports nothing; perflab.compat's old import
    # paths name their modules as strings
    ("records", ("perflab.records", "perflab.compat")),
    # pure: statistics, the budget's plan (each lens's cost model is its own), bisect's search
    ("calculations", ("perflab.stats", "perflab.budget", "perflab.bisection")),
    # the lens descriptors: the modules directly under lenses/ (the descriptor record, the
    # registry ...), lenses/<lens>/__init__.py and the name, cost model and options it names
    # (lenses/<lens>/metric.py, cost.py and options.py, pure); placed by layer_of's rule below
    ("lens catalogue", ("perflab.lenses",)),
    # the machine, the plan, and what persists: the store, the worker scripts, git
    (
        "foundation",
        ("perflab.machine", "perflab.plan", "perflab.store", "perflab.worker", "perflab.git"),
    ),
    ("report", ("perflab.report",)),
    # what outside tools write, parsed and compared (pure); then the drivers that run or read
    # them (perf, llvm-symbolizer, ELF/DWARF, /proc): below every lens, knowing none
    ("tool output", ("perflab.tool_output",)),
    ("tool drivers", ("perflab.tool_drivers",)),
    ("measure", ("perflab.measure",)),
    ("lenses", ("perflab.lenses.*",)),  # a lens's own modules: measure, analyse, render ...
    (
        "engine",
        (
            "perflab.engine",  # run, analyse and compare; --ray's cells (engine.cluster)
            "perflab.analyse",  # what the lenses' comparisons of one pair say together
        ),
    ),
    ("diagnose", ("perflab.diagnose",)),  # doctor and events run lenses' probes, read stores
    ("api", ("perflab.api", "perflab.workflows", "perflab.publish")),  # workflows; publish
    ("cli", ("perflab.cli", "perflab")),  # the package face imports the API
)

# the contract checked from outside: never, not even through another module; measure/ is what
# lenses share, so a lens tells it what it needs (options as values) and it reads no lens
FORBIDDEN = {
    "perflab.report": ("perflab.engine", "perflab.api", "perflab.cli", "perflab.lenses"),
    "perflab.store": ("perflab.engine", "perflab.api", "perflab.cli", "perflab.lenses"),
    "perflab.measure": ("perflab.engine", "perflab.api", "perflab.cli", "perflab.lenses"),
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    if parts[:2] == ["perflab", "lenses"] and len(parts) == 3:
        # a lens package's __init__ (its descriptor), or a module directly under lenses/
        return _index("lens catalogue")
    named = ("metric", "cost", "options")
    if parts[:2] == ["perflab", "lenses"] and len(parts) == 4 and parts[3] in named:
        return _index("lens catalogue")  # a lens's name, cost model and options: its descriptor's
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix.endswith(".*"):
                matches = module.startswith(prefix[:-1])
                length = len(prefix) - 1
            else:
                matches = module == prefix or module.startswith(prefix + ".")
                length = len(prefix)
            if matches and length > best_len:
                best, best_len = index, length
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def _index(name: str) -> int:
    return next(i for i, (layer, _) in enumerate(LAYERS) if layer == name)


def _edges() -> list[tuple[str, str]]:
    return [(module, target) for module in MODULES for target in sorted(imports_of(module))]


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for module, target in _edges()
        if layer_of(target) > layer_of(module) and (module, target) not in PENDING
    ]
    assert not upward, "\n".join(upward)


def _closure(module: str) -> set[str]:
    """Everything importing `module` runs: its imports, theirs, and the packages above them."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        if current in seen or current not in MODULES:
            continue
        seen.add(current)
        todo += [t for t in imports_of(current) if (current, t) not in PENDING]
        parts = current.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
    return seen


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_renderers_store_and_measure_reach_no_engine_api_cli_or_lens(package: str) -> None:
    bad = []
    for module in MODULES:
        if module != package and not module.startswith(package + "."):
            continue
        for reached in sorted(_closure(module)):
            if any(reached == f or reached.startswith(f + ".") for f in FORBIDDEN[package]):
                bad.append(f"{module} reaches {reached}")
    assert not bad, "\n".join(bad)


def test_pending_violations_still_exist() -> None:
    """Remove an entry from PENDING once its import is gone."""
    edges = set(_edges())
    gone = [f"{module} -> {target}" for module, target in PENDING if (module, target) not in edges]
    assert not gone, "no longer imported, remove from PENDING: " + ", ".join(gone)


# a hook as a descriptor names it: "module:attribute", imported on first use
HOOK = re.compile(r"(?P<module>[A-Za-z_][\w.]*):(?P<attribute>[A-Za-z_]\w*)")


def _named(record: object, where: str) -> Iterator[tuple[str, str]]:
    """Every str field of a descriptor and of the records it holds (worker, planning, figures,
    explanation and its blind spot ...) that names a perflab module or a hook, with its path."""
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, field.name)
        path = f"{where}.{field.name}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            yield from _named(value, path)
        elif isinstance(value, str) and (HOOK.fullmatch(value) or value.startswith("perflab.")):
            yield path, value


def _descriptor_names() -> list[tuple[str, str]]:
    from perflab.lenses.registry import DESCRIPTORS

    return [(path, value) for d in DESCRIPTORS for path, value in _named(d, str(d.metric))]


def test_a_descriptor_loads_by_name_only_its_own_lens() -> None:
    """The lens catalogue loads a lens's class, renderer and hooks by name ("module:attribute",
    imported on first use), which no import statement shows: each must be a module of that
    lens's own package, so the one edge up from the catalogue is into the lens it describes,
    and name a callable there. Worker handlers (a module alone) are source sent to the
    worker, never imported by perflab: the lens's own, or a worker script (perflab.worker)."""
    bad = []
    for path, value in _descriptor_names():
        hook = HOOK.fullmatch(value)
        module = hook["module"] if hook else value
        own = f"perflab.lenses.{path.partition('.')[0]}."
        allowed = (own,) if hook else (own, "perflab.worker.")
        if module not in MODULES:
            bad.append(f"{path} = {value!r}: no such module")
        elif not module.startswith(allowed):
            bad.append(f"{path} = {value!r}: not a module of {' or '.join(allowed)}")
        elif hook and not callable(
            getattr(importlib.import_module(module), hook["attribute"], None)
        ):
            bad.append(f"{path} = {value!r}: {hook['attribute']} is not a callable of {module}")
    assert not bad, "\n".join(bad)


def test_every_kind_of_hook_a_descriptor_names_is_checked() -> None:
    """The walk above reaches every hook field the registry's lenses fill in, so a hook record
    added or moved is checked without naming it here."""
    fields = {
        path.partition(".")[2] for path, value in _descriptor_names() if HOOK.fullmatch(value)
    }
    assert fields >= {
        "lens",
        "render",
        "figures.analysis",
        "figures.paired_units",
        "explanation.accounts",
        "explanation.code_facts",
        "explanation.same_code",
        "explanation.blind_spot.tool_rows",
        "explanation.blind_spot.cpu_ran",
    }
