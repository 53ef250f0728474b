"""The probe the cost-model tests price with (tests/unit/budget and each lens's test_cost): a
quick statement, two variants."""

from __future__ import annotations

import dataclasses

from perflab.budget.costs import CostProbe
from perflab.records.kinds import BenchmarkKind

QUICK = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=0.05,
    import_s=0.01,
    fork_s=0.01,
    sample_s=0.01,
    probe_s=0.2,
)
# the same where two CPUs count side by side
QUICK_TWO_CPUS = dataclasses.replace(QUICK, counting_cpus=2)
# a torch benchmark's: seconds to start an interpreter and import torch
TORCH = dataclasses.replace(QUICK, startup_s=2.1, import_s=2.0, fork_s=0.05)
