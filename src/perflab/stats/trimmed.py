"""A command comparison's interval over its units: a trimmed mean, robust to spoiled units.

A command's unit is about a second of blocks, the median of a few pairs (fewer the longer the
command and the busier the machine). On a shared machine a run's CPU itself slows down for a
while (its CPU time grows, not only its wall time), so a unit whose few pairs met such spells is far
off, and a mean over the units, with their SD, pays for every such unit in both its centre and its
width. The interval is therefore the Tukey-McLaughlin (Yuen) interval of the 20%-trimmed mean of the
units: the mean of the middle units, with a standard error from the winsorized units and n - 2g - 1
degrees of freedom (g units trimmed at each end). It is a valid interval for the trimmed mean of
independent units, which is the true log ratio when the unit values are symmetric around it
(every A/A by the ABBA symmetry, and an A/B whose spoiled spells hit both variants alike).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from perflab.stats.paired import (
    PairedLogRatio,
    RatioEstimate,
    estimate_ratio,
    student_t_quantile,
    unit_means,
)
from perflab.stats.sequential import decided_agree

# The share of units trimmed at each end.
TRIM_SHARE = 0.2
# Below this many units, the plain t interval of the mean: with g = 1 of 5-9 units the trimmed
# interval's few degrees of freedom made it a little liberal in simulation.
MIN_UNITS_TO_TRIM = 10


def trimmed_count(n: int, trim: float = TRIM_SHARE) -> int | None:
    """How many of `n` values are trimmed at each end; None where the plain mean is used
    instead (too few values, or nothing to trim)."""
    g = math.floor(trim * n)
    if n < MIN_UNITS_TO_TRIM or g < 1 or n - 2 * g < 2:
        return None
    return g


def trimmed_centre(values: Sequence[float], trim: float = TRIM_SHARE) -> float:
    """The trimmed mean of `values` (the plain mean where `trimmed_count` trims nothing):
    the centre `trimmed_ratio` puts its interval around, for a variant's own values."""
    g = trimmed_count(len(values), trim)
    if g is None:
        return float(np.mean(values))
    ordered = np.sort(np.asarray(values, dtype=float))
    return float(np.mean(ordered[g : len(values) - g]))


def trimmed_interval(
    values: Sequence[float], confidence: float, trim: float = TRIM_SHARE
) -> tuple[float, float, float] | None:
    """(centre, half-width, equivalent SD) in log space of the trimmed mean of `values`; None
    with fewer than `MIN_UNITS_TO_TRIM` values or nothing to trim. The equivalent SD is the SD
    for which the t interval over all the values would be as wide (what forecasts read)."""
    n = len(values)
    g = trimmed_count(n, trim)
    if g is None:
        return None
    ordered = np.sort(np.asarray(values, dtype=float))
    centre = float(np.mean(ordered[g : n - g]))
    winsorized = np.clip(ordered, ordered[g], ordered[n - g - 1])
    standard_error = float(np.std(winsorized, ddof=1)) / ((1 - 2 * g / n) * math.sqrt(n))
    half = student_t_quantile(0.5 + confidence / 2, n - 2 * g - 1) * standard_error
    sd = half * math.sqrt(n) / student_t_quantile(0.5 + confidence / 2, n - 1)
    return centre, half, sd


def trimmed_ratio(
    pairs: Sequence[PairedLogRatio],
    confidence: float = 0.95,
    units: Mapping[int, int] | None = None,
    trim: float = TRIM_SHARE,
) -> RatioEstimate:
    """The ratio and interval of the trimmed mean of the unit values (`unit_means`); the
    Student t interval of their mean (`estimate_ratio`) when there are too few to trim."""
    values = list(unit_means(pairs, units).values())
    trimmed = trimmed_interval(values, confidence, trim)
    if trimmed is None:
        return estimate_ratio(pairs, confidence, units)
    centre, half, sd = trimmed
    return RatioEstimate(
        ratio=math.exp(centre),
        ci_low=math.exp(centre - half),
        ci_high=math.exp(centre + half),
        n_groups=len(values),
        n_pairs=len(pairs),
        between_group_sd=sd,
        confidence=confidence,
    )


def trimmed_agree(
    means: Sequence[RatioEstimate],
    trimmed: Sequence[RatioEstimate],
    *,
    equivalence_band: float,
    confidence: float,
    family: int = 1,
) -> bool:
    """Whether every comparison's trimmed interval gives the verdict its confidence sequence
    gives (`stats.sequential.decided_agree`): a command run stops early only then."""
    return decided_agree(
        means, trimmed, equivalence_band=equivalence_band, confidence=confidence, family=family
    )
