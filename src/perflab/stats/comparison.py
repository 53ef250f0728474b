"""A `Comparison` from a ratio and its interval: the verdict rule applied in one place, so
every lens decides `faster`/`equivalent`/`slower` the same way."""

from __future__ import annotations

from perflab.model import Comparison, Details, Metric
from perflab.stats.paired import RatioEstimate, verdict_for

# (ratio, ci_low, ci_high): an interval not estimated from paired groups (e.g. over repeats)
RatioInterval = tuple[float, float, float]


def comparison_from(
    estimate: RatioEstimate | RatioInterval,
    *,
    equivalence_band: float,
    benchmark: str,
    metric: Metric,
    baseline: str,
    variant: str,
    baseline_value: float,
    variant_value: float,
    unit: str,
    event: str | None = None,
    details: Details | None = None,
) -> Comparison:
    """variant/baseline with the interval of `estimate` and the verdict it implies."""
    if isinstance(estimate, RatioEstimate):
        ratio, low, high = estimate.ratio, estimate.ci_low, estimate.ci_high
    else:
        ratio, low, high = estimate
    return Comparison(
        benchmark=benchmark,
        metric=metric,
        baseline=baseline,
        variant=variant,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict_for(low, high, equivalence_band),
        baseline_value=baseline_value,
        variant_value=variant_value,
        unit=unit,
        event=event,
        details=details,
    )
