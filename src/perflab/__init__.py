"""perflab: an A/B lab for performance changes.

    import perflab
    experiment = perflab.make_experiment(stmt="sum(range(1000))", variants=["A", "B env.X=1"])
    result = perflab.run(experiment)

See docs/python-api.md.
"""

__version__ = "0.1.0"

from perflab.api import asm_views, compare, list_runs, load_run, make_experiment, run, show
from perflab.engine import RunResult
from perflab.errors import (
    BenchmarkFailedError,
    ConfigError,
    PerflabError,
    StoreError,
    ToolUnavailableError,
)
from perflab.model import (
    Benchmark,
    Comparison,
    Experiment,
    Metric,
    RunStatus,
    Settings,
    Variant,
    Verdict,
)

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
    "compare",
    "list_runs",
    "load_run",
    "make_experiment",
    "run",
    "show",
]
