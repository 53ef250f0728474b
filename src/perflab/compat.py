"""Old import paths: names that perflab's docs once gave under a module that no longer defines
them, kept working until perflab 2.0 removes them. Each old module's `__getattr__` (PEP 562)
asks `moved`; new code imports each name from the module that defines it."""

from __future__ import annotations

import importlib

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


def moved(module: str, name: str) -> object:
    """What `module.name` names, where `name` moved away from `module`."""
    home = MOVED.get((module, name))
    if home is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
