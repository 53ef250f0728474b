"""Stopping early without manufacturing a claim: confidence sequences over the interval's units.

The time lens looks at its interval after every generation (or, for commands, every quarter
second) and stops once it is precise enough. That is sequential testing: a fixed-sample 95%
interval looked at many times, and kept at the look where it happened to be narrow, covers the
truth less often than 95% (a narrow Student t interval from few units is often one whose variance
is underestimated). So the decision to stop early is taken on a *confidence sequence*: an interval
that holds at every look at once, with probability 1 - alpha, whatever rule chose the look.

The sequence is the normal-mixture sequence for a mean of independent normal units with unknown
variance (Robbins' method of mixtures with the scale removed by invariance, as in Lai 1976):
the likelihood ratio of the units' direction under "mean mu + theta*sigma", theta ~ N(0, 1/rho),
against "mean mu", is a nonnegative martingale under mu,

    M_n = sqrt(rho / (rho + n)) * (1 - S^2 / ((rho + n) * V)) ** (-n / 2),
    S = sum(x_i - mu),  V = sum((x_i - mu) ** 2),

so by Ville's inequality the set of mu with M_n < 1/alpha holds mu at every n with probability
1 - alpha. Solved for mu it is the units' mean plus or minus `sequence_log_half_width`.

The reported interval stays the Student t interval of `stats.paired` (narrower); a run stops
early only when the sequence, which contains it, has settled the verdict, so a claim made at an
early stop is one the sequence makes (docs/statistics.md, "Stopping"). A command's reported
interval is its units' trimmed mean's (`stats.trimmed`), and an overload check may widen either
(`stats.overload`); the sequence need not contain those: an early stop also needs the interval
the verdict is read off to give the sequence's verdict (`decided_agree`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from perflab.records.kinds import Verdict
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import RatioEstimate, student_t_quantile

# The mixing precision (in units of the units' SD): the sequence is narrowest around n ~ 10-50
# units, where the time lens stops (generations; command batches); larger moves that later.
SEQUENCE_RHO = 2.0
# Early stops need at least this many units: below, the sequence is wide or infinite anyway,
# and the variance it rests on is poorly known.
MIN_UNITS_TO_STOP_EARLY = 10
# "~N s more": the extra time after which a new run with that much more budget decides (CI
# inside the band, or excluding 1) with this probability by the forecast below; above the 80%
# promised, since the forecast takes this run's SD as known (simulated: docs/statistics.md).
DECIDE_PROBABILITY = 0.9


def sequence_log_half_width(n: int, sd: float, alpha: float, rho: float = SEQUENCE_RHO) -> float:
    """Half the width (log space) of the 1 - alpha confidence sequence around the mean of `n`
    units with sample SD `sd` (ddof 1); inf when the sequence is not yet bounded."""
    if n < 2 or not math.isfinite(sd) or not 0 < alpha < 1:
        return math.inf
    # the largest S^2 / ((rho + n) V) that keeps mu inside: M_n < 1/alpha
    bound = 1 - (alpha * alpha * rho / (rho + n)) ** (1 / n)
    room = n - bound * (rho + n)
    if room <= 0:
        return math.inf
    # with V = (n - 1) sd^2 + n d^2 and S = n d, solved for the largest |d|
    return sd * math.sqrt(bound * (rho + n) * (n - 1) / (n * room))


def sequence_interval(
    estimate: RatioEstimate, alpha: float, rho: float = SEQUENCE_RHO
) -> tuple[float, float]:
    """(low, high) as ratios: the confidence sequence at this look, around the same centre as
    the estimate's t interval (which it contains)."""
    if estimate.n_groups < 2 or not estimate.ratio > 0:
        return 0.0, math.inf
    half = sequence_log_half_width(estimate.n_groups, estimate.between_group_sd, alpha, rho)
    if math.isinf(half):
        return 0.0, math.inf
    centre = math.log(estimate.ratio)
    return math.exp(centre - half), math.exp(centre + half)


def settles(low: float, high: float, equivalence_band: float) -> bool:
    """Whether an interval decides the verdict (stats.comparison.verdict_for): inside 1 ± band,
    or excluding 1."""
    return verdict_for(low, high, equivalence_band) is not Verdict.INCONCLUSIVE


def sequence_alpha(confidence: float, comparisons: int, family: int = 1) -> float:
    """The error of each comparison's sequence: 1 - confidence split over the comparisons one
    stopping rule watches, or over the run's whole family when that is larger (stats.family),
    so that an early stop rests on the level the verdicts are decided at and the chance that
    any early stop rests on a sequence that misses stays 1 - confidence."""
    return (1 - confidence) / max(1, comparisons, family)


def may_stop_early(
    estimates: Sequence[RatioEstimate],
    *,
    precision: float,
    equivalence_band: float,
    confidence: float,
    min_units: int = MIN_UNITS_TO_STOP_EARLY,
    family: int = 1,
) -> bool:
    """The stopping rule: every comparison's confidence sequence is within `precision` (half
    width, log space) and settles its verdict, from at least `min_units` units. `family`: the
    comparisons the run decides together (stats.family); each sequence is then at the family's
    level, as each verdict is."""
    if not estimates:
        return False
    alpha = sequence_alpha(confidence, len(estimates), family)
    for estimate in estimates:
        if estimate.n_groups < min_units:
            return False
        low, high = sequence_interval(estimate, alpha)
        if low <= 0 or math.isinf(high):
            return False
        if (math.log(high) - math.log(low)) / 2 > precision:
            return False
        if not settles(low, high, equivalence_band):
            return False
    return True


def decided_agree(
    means: Sequence[RatioEstimate],
    decided: Sequence[RatioEstimate],
    *,
    equivalence_band: float,
    confidence: float,
    family: int = 1,
) -> bool:
    """Whether every comparison's interval as the verdict reads it (`decided`: a command's
    trimmed mean's, or one an overload check widened) gives the verdict its confidence
    sequence (around the units' mean, at the stopping rule's level) gives: a claim made at an
    early stop must be one the sequence, valid at every look, makes too. `family`: as
    `may_stop_early`'s."""
    alpha = sequence_alpha(confidence, len(means), family)
    for mean, reported in zip(means, decided, strict=True):
        low, high = sequence_interval(mean, alpha)
        sequence_verdict = verdict_for(low, high, equivalence_band)
        if verdict_for(reported.ci_low, reported.ci_high, equivalence_band) is not sequence_verdict:
            return False
    return True


# The unit SD behind a forecast is this run's estimate, itself uncertain (a few units): the
# chance is averaged over this many quantiles of its distribution (chi-square, n - 1 df).
SD_QUANTILES = 8


def decide_probability(
    estimate: RatioEstimate, units: float, equivalence_band: float, truth: float = 0.0
) -> float:
    """The chance that a new run of `units` units ends decided (t interval inside the band, or
    excluding 1) when the true log ratio is `truth`: its centre is normal around the truth with
    the unit SD over sqrt(units), its half-width t * SD / sqrt(units); averaged over what the
    unit SD may be, given this run's estimate from its units."""
    # what the SD quantiles share, found once: a forecast asks this hundreds of times per
    # comparison, and a published site's first analysis thousands of comparisons
    band = math.log(1 + equivalence_band)
    t = student_t_quantile(0.5 + estimate.confidence / 2, max(1, round(units) - 1))
    root = math.sqrt(units)
    scales = _sd_scales(max(1, estimate.n_groups - 1))
    chances: list[float | None] = []
    points: list[float] = []
    for scale in scales:
        sd = estimate.between_group_sd * scale
        half = t * (sd / root)
        if half <= band / 2:
            chances.append(1.0)  # any centre: inside the band with its interval, or beyond 1
            continue
        spread = sd / root
        chances.append(None)
        points += [(x - truth) / spread for x in (band - half, half - band, -half, half)]
    # one vectorised normal CDF for every scale: the same values, elementwise, as one by one
    below = iter(_ndtr()(points).tolist() if points else ())
    total = 0.0
    for chance in chances:
        if chance is None:
            inside, outside, low, high = next(below), next(below), next(below), next(below)
            chance = min(1.0, max(0.0, inside - outside) + (low + (1 - high)))
        total += chance
    return total / len(scales)


@functools.cache
def _ndtr() -> Any:
    """scipy's normal CDF, imported once on first use (an import statement in the function
    cost more than the CDF itself at a forecast's hundreds of thousands of calls)."""
    from scipy.special import ndtr

    return ndtr


@functools.lru_cache(maxsize=256)
def _sd_scales(df: int) -> tuple[float, ...]:
    """The unit SD's multipliers at SD_QUANTILES quantiles of its chi-square distribution with
    `df` degrees of freedom; kept: a forecast asks for them hundreds of times per comparison."""
    from scipy.special import chdtri

    # (k + 0.5) / SD_QUANTILES: the chance a chi-square draw exceeds the quantile
    return tuple(
        math.sqrt(df / float(chdtri(df, (k + 0.5) / SD_QUANTILES))) for k in range(SD_QUANTILES)
    )


def seconds_to_decide(
    estimate: RatioEstimate,
    equivalence_band: float,
    elapsed_s: float,
    probability: float = DECIDE_PROBABILITY,
) -> float | None:
    """How much more budget (seconds, at this run's rate of units) a new run needs to decide
    with at least `probability`, for every truth of `forecast_truths` (the verdict the data
    point to); 0 when this one decided; None when it cannot be said."""
    n = estimate.n_groups
    sd = estimate.between_group_sd
    if n < 2 or not estimate.ratio > 0 or elapsed_s <= 0 or not math.isfinite(sd) or sd <= 0:
        return None
    if settles(estimate.ci_low, estimate.ci_high, equivalence_band):
        return 0.0
    needed = max(
        _units_to_decide(estimate, equivalence_band, truth, probability)
        for truth in forecast_truths(estimate, equivalence_band)
    )
    return elapsed_s * max(0.0, needed / n - 1)


def forecast_truths(estimate: RatioEstimate, equivalence_band: float) -> tuple[float, ...]:
    """The true log ratios a forecast plans for: the verdict the data point to. An estimate
    inside the band points to `equivalent`, which an inconclusive interval also leaves open to
    no difference at all, so both (the one needing longer is the one a user can count on); one
    outside the band points to a difference, and a new run needs only to exclude 1 at it
    (planning to settle `equivalent` too asks for far more than the difference needs)."""
    centre = math.log(estimate.ratio)
    if abs(centre) > math.log(1 + equivalence_band):
        return (centre,)
    return centre, 0.0


def _units_to_decide(
    estimate: RatioEstimate, equivalence_band: float, truth: float, probability: float
) -> float:
    """The least units (by doubling, then bisection) with which a new run decides with
    `probability` when the truth is `truth`; the chance reaches 1 once the half-width is half
    the band, so this ends."""
    low, high = 2.0, float(max(4, 2 * estimate.n_groups))
    while decide_probability(estimate, high, equivalence_band, truth) < probability:
        low, high = high, 2 * high
    for _ in range(40):
        middle = (low + high) / 2
        if decide_probability(estimate, middle, equivalence_band, truth) >= probability:
            high = middle
        else:
            low = middle
    return high
