"""perflab: an A/B lab for performance changes.

    import perflab
    experiment = perflab.make_experiment(stmt="sum(range(1000))", variants=["A", "B env.X=1"])
    result = perflab.run(experiment)

See docs/python-api.md.

The names below load on first use, so importing one of perflab's own modules (a renderer, the
store) does not import the whole library through this package face.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# first: its clock is when perflab started in this process
from perflab.machine import started as _started  # noqa: F401
from perflab.records.version import __version__

if TYPE_CHECKING:
    from perflab.api import (
        asm_views,
        cache_entries,
        check_store,
        compare,
        list_runs,
        load_run,
        make_experiment,
        make_matrix,
        make_stack,
        prune_cache,
        run,
        show,
    )
    from perflab.records.errors import (
        BenchmarkFailedError,
        ConfigError,
        PerflabError,
        StoreError,
        ToolUnavailableError,
    )
    from perflab.records.kinds import Metric, RunStatus, Verdict
    from perflab.records.model import Benchmark, Comparison, Experiment, Variant
    from perflab.records.results import RunResult
    from perflab.records.settings import Settings

from perflab.compat import serve_old_modules

serve_old_modules()  # old import paths (perflab.compat), until perflab 2.0

# every function of perflab.api is here (a unit test checks), so `import perflab` and
# `import perflab.api as perflab` give the same functions, as docs/python-api.md says
_HOMES = {
    "asm_views": "perflab.api",
    "cache_entries": "perflab.api",
    "check_store": "perflab.api",
    "compare": "perflab.api",
    "list_runs": "perflab.api",
    "load_run": "perflab.api",
    "make_experiment": "perflab.api",
    "make_matrix": "perflab.api",
    "make_stack": "perflab.api",
    "prune_cache": "perflab.api",
    "run": "perflab.api",
    "show": "perflab.api",
    "RunResult": "perflab.records.results",
    "BenchmarkFailedError": "perflab.records.errors",
    "ConfigError": "perflab.records.errors",
    "PerflabError": "perflab.records.errors",
    "StoreError": "perflab.records.errors",
    "ToolUnavailableError": "perflab.records.errors",
    "Benchmark": "perflab.records.model",
    "Comparison": "perflab.records.model",
    "Experiment": "perflab.records.model",
    "Metric": "perflab.records.kinds",
    "RunStatus": "perflab.records.kinds",
    "Settings": "perflab.records.settings",
    "Variant": "perflab.records.model",
    "Verdict": "perflab.records.kinds",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'perflab' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Benchmark",
    "BenchmarkFailedError",
    "Comparison",
    "ConfigError",
    "Experiment",
    "Metric",
    "PerflabError",
    "RunResult",
    "RunStatus",
    "Settings",
    "StoreError",
    "ToolUnavailableError",
    "Variant",
    "Verdict",
    "__version__",
    "asm_views",
    "cache_entries",
    "check_store",
    "compare",
    "list_runs",
    "load_run",
    "make_experiment",
    "make_matrix",
    "make_stack",
    "prune_cache",
    "run",
    "show",
]
