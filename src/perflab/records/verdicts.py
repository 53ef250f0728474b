"""The verdict rule itself: an interval against 1 and the equivalence band around it.

Every verdict starts here: lenses through `stats.comparison.comparison_from`, which builds a
`Comparison` with it; the sequential check and interaction verdicts call it directly. The
stricter rule for an interval over one process per variant is
`stats.comparison.one_process_verdict`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from perflab.records.kinds import Verdict


@dataclass(frozen=True)
class Interval:
    """A ratio with a confidence interval (bounds 0/inf when unknown)."""

    ratio: float
    ci_low: float
    ci_high: float


def verdict_for(ci_low: float, ci_high: float, equivalence_band: float) -> Verdict:
    """`equivalent` when the whole CI lies inside 1 ± band; otherwise `faster`/`slower` when it
    excludes 1; otherwise `inconclusive`."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return Verdict.INCONCLUSIVE
    if 1 - equivalence_band <= ci_low and ci_high <= 1 + equivalence_band:
        return Verdict.EQUIVALENT
    if ci_low > 1:
        return Verdict.SLOWER
    if ci_high < 1:
        return Verdict.FASTER
    return Verdict.INCONCLUSIVE
