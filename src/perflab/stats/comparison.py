"""A `Comparison` from a ratio and its interval: the verdict rule applied in one place, so
every lens decides `faster`/`equivalent`/`slower` the same way."""

from __future__ import annotations

from dataclasses import dataclass, replace

from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison, Details
from perflab.records.verdicts import verdict_for
from perflab.stats.paired import RatioEstimate

# (ratio, ci_low, ci_high): an interval not estimated from paired groups (e.g. over repeats)
RatioInterval = tuple[float, float, float]


@dataclass(frozen=True)
class Subject:
    """What a comparison compares: `variant` against `baseline` on one benchmark and metric."""

    benchmark: str
    metric: Metric
    baseline: str
    variant: str


@dataclass(frozen=True)
class SideValues:
    """The two per-iteration values shown beside the ratio, in `unit`."""

    baseline: float
    variant: float
    unit: str


def comparison_from(
    estimate: RatioEstimate | RatioInterval,
    subject: Subject,
    values: SideValues,
    *,
    equivalence_band: float,
    event: str | None = None,
    details: Details | None = None,
) -> Comparison:
    """variant/baseline with the interval of `estimate` and the verdict it implies."""
    if isinstance(estimate, RatioEstimate):
        ratio, low, high = estimate.ratio, estimate.ci_low, estimate.ci_high
    else:
        ratio, low, high = estimate
    return Comparison(
        benchmark=subject.benchmark,
        metric=subject.metric,
        baseline=subject.baseline,
        variant=subject.variant,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict_for(low, high, equivalence_band),
        baseline_value=values.baseline,
        variant_value=values.variant,
        unit=values.unit,
        event=event,
        details=details,
    )


# Separate worker processes of identical code run at different speeds (memory layout, hash
# seed), up to about this much apart. A lens whose variants each ran in one process (the profile
# lens), or in children forked from one process that set those effects (the torch lens's
# generations), has an interval that holds none of that, so its verdict needs the whole interval
# beyond this (docs/statistics.md, "A noise model for processes").
ONE_PROCESS_ALLOWANCE = 0.10


def one_process_verdict(comparison: Comparison) -> Comparison:
    """The verdict a comparison of one worker process per variant can support: `faster` or
    `slower` only when the interval lies beyond what processes of the same code differ by,
    never `equivalent` (two processes that happen to agree say nothing of a small change)."""
    if comparison.ci_low > 1 + ONE_PROCESS_ALLOWANCE:
        verdict = Verdict.SLOWER
    elif comparison.ci_high < 1 / (1 + ONE_PROCESS_ALLOWANCE):
        verdict = Verdict.FASTER
    else:
        verdict = Verdict.INCONCLUSIVE
    return replace(comparison, verdict=verdict)
