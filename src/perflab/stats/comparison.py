"""The verdict rule, and a `Comparison` from a ratio and its interval decided by it, so every
lens decides `faster`/`equivalent`/`slower` the same way.

The rule lives here alone: `verdict_for` holds the band test and the stricter rule for an
interval over one process per variant (`ONE_PROCESS_ALLOWANCE`); lenses reach it through
`comparison_from`, the sequential check and the interaction verdicts call `verdict_for`. A lens
that knows its interval cannot be trusted withholds the verdict here too (`withhold_verdict`),
never by rewriting a comparison's verdict itself, so the verdict the interval gave and the
reason stay in the comparison. An output check that finds the variants computed different values
makes a comparison `invalid` here as well (`invalidate`), keeping the interval's verdict."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison, Details, Withhold
from perflab.stats.paired import RatioEstimate

# (ratio, ci_low, ci_high): an interval not estimated from paired groups (e.g. over repeats)
RatioInterval = tuple[float, float, float]

# Separate worker processes of identical code run at different speeds (memory layout, hash
# seed), up to about this much apart. An interval from samples of one process per variant, or of
# children forked from one process that fixed those effects, holds none of that spread, so its
# verdict needs the whole interval beyond this (docs/statistics.md, "A noise model for processes").
ONE_PROCESS_ALLOWANCE = 0.10


def verdict_for(
    ci_low: float, ci_high: float, equivalence_band: float, *, one_process: bool = False
) -> Verdict:
    """`equivalent` when the whole CI lies inside 1 ± band; otherwise `faster`/`slower` when it
    excludes 1; otherwise `inconclusive`.

    `one_process`: the interval holds nothing of the spread between processes (one worker
    process per variant), so `faster` or `slower` only when it lies beyond what processes of the
    same code differ by, and never `equivalent` (two processes that happen to agree say nothing
    of a small change)."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return Verdict.INCONCLUSIVE
    if one_process:
        if ci_low > 1 + ONE_PROCESS_ALLOWANCE:
            return Verdict.SLOWER
        if ci_high < 1 / (1 + ONE_PROCESS_ALLOWANCE):
            return Verdict.FASTER
        return Verdict.INCONCLUSIVE
    if 1 - equivalence_band <= ci_low and ci_high <= 1 + equivalence_band:
        return Verdict.EQUIVALENT
    if ci_low > 1:
        return Verdict.SLOWER
    if ci_high < 1:
        return Verdict.FASTER
    return Verdict.INCONCLUSIVE


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
    one_process: bool = False,
    withhold: Withhold | None = None,
) -> Comparison:
    """variant/baseline with the interval of `estimate` and the verdict it implies
    (`verdict_for`; `one_process`: the interval is over one worker process per variant), or
    `inconclusive` where `withhold` covers that verdict (`withhold_verdict`)."""
    if isinstance(estimate, RatioEstimate):
        ratio, low, high = estimate.ratio, estimate.ci_low, estimate.ci_high
    else:
        ratio, low, high = estimate
    comparison = Comparison(
        benchmark=subject.benchmark,
        metric=subject.metric,
        baseline=subject.baseline,
        variant=subject.variant,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict_for(low, high, equivalence_band, one_process=one_process),
        baseline_value=values.baseline,
        variant_value=values.variant,
        unit=values.unit,
        event=event,
        details=details,
    )
    return comparison if withhold is None else withhold_verdict(comparison, withhold)


def withhold_verdict(comparison: Comparison, withhold: Withhold) -> Comparison:
    """`comparison` saying `inconclusive` where `withhold` covers the verdict its interval gave,
    with that verdict kept as `interval_verdict` and the reason as `withheld`; unchanged where
    there is no claim to withhold (`inconclusive`; `invalid`, whose output check outranks any
    reason; `equivalent` under a reason for differences only). A lens whose reason rests on the
    comparison itself (its values, another comparison) calls this; the others pass `withhold`
    to `comparison_from`."""
    withheld = {Verdict.FASTER, Verdict.SLOWER}
    if not withhold.differences_only:
        withheld.add(Verdict.EQUIVALENT)
    if comparison.verdict not in withheld:
        return comparison
    return replace(
        comparison,
        verdict=Verdict.INCONCLUSIVE,
        interval_verdict=comparison.verdict,
        withheld=withhold,
    )


def invalidate(comparison: Comparison, check: Mapping[str, Any]) -> Comparison:
    """`comparison` saying `invalid`, because its variants computed different values: `check`
    is the output check that found it (its expression and where the values first differ). The
    verdict the interval gave stays as `interval_verdict` (one a lens withheld stays with its
    reason): the check outranks any verdict, but does not erase what the interval said."""
    return replace(
        comparison,
        verdict=Verdict.INVALID,
        interval_verdict=comparison.interval_verdict or comparison.verdict,
        output_check=check,
    )
