"""One variant's values summarised (their spread) and two variants' repeated counts compared.
Pure: values in, numbers out."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np


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
