"""Ratios of ratios: does a change do the same on two bases, and do the steps of a stack
multiply up to the whole? Pure functions.

With the paired design every variant of a stack or matrix is measured in the same generations,
so a change's mean log ratio on base B and on base A exist per generation; their difference
per generation is the log interaction, and its CI is a Student t interval over generations,
like a single ratio's. Lenses without generations (deterministic counts) give an interval per
ratio; those are combined in log space, as if independent (conservative).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from perflab.records.kinds import Verdict
from perflab.records.results import InteractionVerdict, Interval
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import student_t_quantile

_INTERACTION_OF = {
    Verdict.EQUIVALENT: InteractionVerdict.NONE,
    Verdict.FASTER: InteractionVerdict.BETTER_ON_BASE,
    Verdict.SLOWER: InteractionVerdict.WORSE_ON_BASE,
    Verdict.INCONCLUSIVE: InteractionVerdict.INCONCLUSIVE,
    Verdict.INVALID: InteractionVerdict.INCONCLUSIVE,
}


def interaction_verdict(ci_low: float, ci_high: float, band: float) -> InteractionVerdict:
    """The verdict rule (stats.comparison.verdict_for) read as an interaction: a ratio of
    ratios inside the band is no interaction, below it the change does better on the base."""
    return _INTERACTION_OF[verdict_for(ci_low, ci_high, band)]


def paired_interaction(
    on_base: Mapping[int, float], on_reference: Mapping[int, float], confidence: float = 0.95
) -> Interval:
    """exp(mean over shared groups of (log ratio on base - log ratio on reference)) with a t
    interval over those groups. `on_*`: group (generation) -> mean log ratio of the change."""
    shared = sorted(set(on_base) & set(on_reference))
    differences = [on_base[g] - on_reference[g] for g in shared]
    if not differences:
        return Interval(math.nan, 0.0, math.inf)
    centre = float(np.mean(differences))
    if len(differences) < 2:
        return Interval(math.exp(centre), 0.0, math.inf)
    sd = float(np.std(differences, ddof=1))
    t_quantile = student_t_quantile(0.5 + confidence / 2, df=len(differences) - 1)
    half = t_quantile * sd / math.sqrt(len(differences))
    return Interval(math.exp(centre), math.exp(centre - half), math.exp(centre + half))


def _log_sides(interval: Interval) -> tuple[float, float]:
    """Distances from the log ratio down to the low end and up to the high end."""
    if interval.ci_low <= 0 or math.isinf(interval.ci_high) or interval.ratio <= 0:
        return math.inf, math.inf
    centre = math.log(interval.ratio)
    return max(centre - math.log(interval.ci_low), 0.0), max(
        math.log(interval.ci_high) - centre, 0.0
    )


def combine_log(terms: Sequence[tuple[Interval, int]]) -> Interval:
    """prod(ratio ** sign) with the sides of the intervals added in quadrature in log space;
    `terms` are (interval, +1 or -1). A term with an unknown interval makes the result's unknown."""
    if not terms or any(math.isnan(t.ratio) or t.ratio <= 0 for t, _ in terms):
        return Interval(math.nan, 0.0, math.inf)
    centre = sum(sign * math.log(t.ratio) for t, sign in terms)
    low_sq = high_sq = 0.0
    for interval, sign in terms:
        down, up = _log_sides(interval)
        if sign < 0:
            down, up = up, down  # dividing swaps which side lowers the result
        low_sq += down * down
        high_sq += up * up
    if math.isinf(low_sq) or math.isinf(high_sq):
        return Interval(math.exp(centre), 0.0, math.inf)
    return Interval(
        math.exp(centre),
        math.exp(centre - math.sqrt(low_sq)),
        math.exp(centre + math.sqrt(high_sq)),
    )


def interaction_from_intervals(on_base: Interval, on_reference: Interval) -> Interval:
    return combine_log([(on_base, 1), (on_reference, -1)])


def product_of_steps(steps: Sequence[Interval]) -> Interval:
    return combine_log([(step, 1) for step in steps])


def intervals_overlap(a: Interval, b: Interval, rel_tol: float = 1e-9) -> bool:
    """Whether the intervals share a point (exact counts are equal up to rounding)."""
    slack = 1 + rel_tol
    return a.ci_low <= b.ci_high * slack and b.ci_low <= a.ci_high * slack
