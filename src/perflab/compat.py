"""Old import paths: names and modules that perflab's docs once gave where they no longer live,
kept working until perflab 2.0 removes them. A module that still exists asks `moved` from its
`__getattr__` (PEP 562); a module that is gone is served from here (`serve_old_modules`), so no
package keeps a file for it. New code imports each name from the module that defines it."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Sequence
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

# (old module, name) -> the module that defines the name now; all removed in 2.0
MOVED: dict[tuple[str, str], str] = {
    # docs/python-api.md gives `perflab.engine.RunResult` beside `perflab.RunResult`
    ("perflab.engine", "RunResult"): "perflab.records.results",
    # docs/python-api.md gave `Direction` under `perflab.plan.bisect_search` until 2026-11-27
    ("perflab.plan.bisect_search", "Direction"): "perflab.records.bisect",
    # the vocabularies and settings lived in records.model, where users' code imports them
    # (docs/python-api.md named it as the enumerations' home); model itself still imports
    # BenchmarkKind, Metric, TimeReport, Verdict and Settings
    ("perflab.records.model", "RunStatus"): "perflab.records.kinds",
    ("perflab.records.model", "SettingKind"): "perflab.records.settings",
    ("perflab.records.model", "SettingSpec"): "perflab.records.settings",
    ("perflab.records.model", "setting_specs"): "perflab.records.settings",
}

# old module -> the module every one of its names moved to; all removed in 2.0
MOVED_MODULES: dict[str, str] = {
    # docs/python-api.md named it until 2026-11-29; lens options belong to the lens catalogue
    "perflab.records.shared_options": "perflab.lenses.shared_options",
}

# old modules with no file of their own any more: an import of one is answered here
GONE_MODULES: frozenset[str] = frozenset(
    {"perflab.plan.bisect_search", *MOVED_MODULES},
)


def moved(module: str, name: str) -> object:
    """What `module.name` names, where `name` moved away from `module`."""
    home = MOVED.get((module, name)) or MOVED_MODULES.get(module)
    if home is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(home), name)
    except AttributeError:
        raise AttributeError(f"module {module!r} has no attribute {name!r}") from None


class _GoneModules:
    """Imports of `GONE_MODULES`: an empty module whose names `moved` resolves. A finder and
    loader by protocol, not importlib.abc's classes: importing those doubles `import perflab`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in GONE_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        module.__getattr__ = partial(moved, module.__name__)  # type: ignore[method-assign]


def serve_old_modules() -> None:
    """Answer imports of the old modules that are gone (once per process; perflab's package
    face calls it, so any `import perflab.x` can reach them). Last on the path: a real module
    of the same name wins."""
    if not any(isinstance(finder, _GoneModules) for finder in sys.meta_path):
        sys.meta_path.append(_GoneModules())
