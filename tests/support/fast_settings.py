"""The settings a test runs perflab's Python API with: small budgets, since a test checks
behaviour, not precision (bench/ measures that)."""

from __future__ import annotations

from perflab.plan.settings_by_name import settings_with
from perflab.records.settings import Settings

FAST = settings_with(
    Settings(),
    budget_s=0.5,
    min_generations=2,
    sample_target_ms=1.0,
    warmup_blocks=1,
    sample_timeout_s=20,
    seed=1,
)

# budget 0: a run stops as soon as its minimum design is measured; samples of 5 ms give a
# sampling profiler (perf record) something to catch in each
MINIMUM_DESIGN = Settings(
    budget_s=0.0, min_generations=2, sample_target_ms=5.0, warmup_blocks=1, seed=4
)
