"""A `Comparison` from a ratio and its interval, decided by `records.verdicts`'s rule, so every
lens decides `faster`/`equivalent`/`slower` the same way.

The rule itself (the interval against 1 and the equivalence band) lives in `records.verdicts`;
this module applies it and holds `one_process_verdict`, the stricter rule for an interval that
cannot hold the spread between processes."""

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
# seed), up to about this much apart. An interval from samples of one process per variant, or of
# children forked from one process that fixed those effects, holds none of that spread, so its
# verdict needs the whole interval beyond this (docs/statistics.md, "A noise model for processes").
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
