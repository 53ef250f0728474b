"""One variant's samples summarised (their per-iteration value, their spread) and two variants'
repeated counts compared. Pure: values in, numbers out."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

import numpy as np

from perflab.model import Sample


def per_iteration(samples: Iterable[Sample]) -> float:
    """The per-iteration value of a variant's measured samples: their total value over their
    total iterations, so a sample of more loops weighs more (as `Sample.per_iteration` is one
    sample's value over its loops). Warm-up samples are skipped; nan when none is left."""
    measured = [s for s in samples if not s.warmup]
    loops = sum(s.loops for s in measured)
    return sum(s.value for s in measured) / loops if loops else math.nan


def relative_spread(values: Sequence[float]) -> float:
    """Median absolute deviation relative to the median (robust 'spread')."""
    if not values:
        return math.nan
    array = np.asarray(values, dtype=float)
    median = float(np.median(array))
    return float(np.median(np.abs(array - median))) / median if median else math.nan


def ratio_interval(
    baseline: Sequence[float], variant: Sequence[float]
) -> tuple[float, float, float]:
    """(ratio, low, high) of repeated counts. Deterministic counts give low == ratio == high;
    when repeats differ the interval spans every baseline/variant combination, hiding nothing."""
    if not baseline or not variant or min(baseline) <= 0:
        return math.nan, math.nan, math.nan
    ratio = statistics.median(variant) / statistics.median(baseline)
    return ratio, min(variant) / max(baseline), max(variant) / min(baseline)
