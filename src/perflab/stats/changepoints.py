"""Change points in a series of per-commit results: where the level steps.

PELT (Killick et al. 2012; the search `ruptures.Pelt(model="l2", min_size=1, jump=1)` makes,
here over prefix sums in numpy) with the least-squares cost on the logarithm of the values (a
step is a ratio), penalised as BIC: 2 log(n) sigma^2, sigma the noise of the series estimated
robustly from its successive differences (1.4826 MAD / sqrt 2, so the steps themselves do not
inflate it). Segments whose medians differ by less than `min_step` (a ratio) are merged: a
change point is a step worth a comparison. Each one is only a candidate until a direct
comparison of the commits either side confirms it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChangePoint:
    """A step in a series: where the new level starts, and the medians before and after."""

    index: int  # the first point of the new level
    before: float  # the median of the level before
    after: float  # the median of the level after

    @property
    def ratio(self) -> float:
        return self.after / self.before


def noise(logs: np.ndarray) -> float:
    """The noise of one value of a series (of logarithms), from its successive differences."""
    if len(logs) < 3:
        return 0.0
    differences = np.diff(logs)
    # an exact series (instruction counts) repeats its values between steps: none where half
    # of its differences are exactly zero (a short series' steps would otherwise be its noise,
    # and a one-commit level between two steps merged away)
    if np.count_nonzero(differences == 0.0) * 2 >= len(differences):
        return 0.0
    return difference_noise(differences)


def difference_noise(differences: np.ndarray) -> float:
    """The noise of one value (its standard deviation, robustly) from differences of pairs of
    values: 1.4826 MAD / sqrt 2, so that a few steps among them do not inflate it."""
    if len(differences) < 2:
        return 0.0
    mad = float(np.median(np.abs(differences - np.median(differences))))
    return 1.4826 * mad / math.sqrt(2.0)


def change_points(values: Sequence[float], *, min_step: float = 0.02) -> list[ChangePoint]:
    """The indices where the series' level steps by more than `min_step` (0.02: 2%)."""
    if len(values) < 2 or any(v <= 0 or not math.isfinite(v) for v in values):
        return []
    logs = np.log(np.asarray(values, dtype=float))
    sigma = noise(logs)
    # an exact series (instruction counts) has no noise: any true step pays for itself
    penalty = 2.0 * math.log(len(logs)) * max(sigma, 1e-9) ** 2
    ends = pelt_ends(logs, penalty)
    starts = [0, *ends[:-1]]
    levels = [float(np.median(values[s:e])) for s, e in zip(starts, ends, strict=True)]
    points: list[ChangePoint] = []
    level_start = 0
    for i in range(1, len(starts)):
        before = float(np.median(values[level_start : starts[i]]))
        if abs(math.log(levels[i] / before)) >= math.log1p(min_step):
            points.append(ChangePoint(starts[i], before, levels[i]))
            level_start = starts[i]
    return points


def pelt_ends(series: np.ndarray, penalty: float) -> list[int]:
    """The ends of the segments that minimise their squared deviations from their means plus
    `penalty` per segment, the last end len(series). Exact: PELT drops a start only once it
    cannot begin the last segment of a better partition; ties go to the earliest start. Each
    segment's cost is read from prefix sums (of the series less its median: the sums then
    lose less to rounding), so a series of 500 takes milliseconds where a cost function
    called per candidate took seconds. A segment of equal values costs exactly 0: an exact
    series (instruction counts) has a penalty near 0, which rounding would outbid."""
    n = len(series)
    centred = series - np.median(series)
    sums = np.concatenate(([0.0], np.cumsum(centred)))
    squares = np.concatenate(([0.0], np.cumsum(centred * centred)))
    repeats = np.concatenate(([False], series[1:] == series[:-1]))
    # the start of the run of equal values each point is in
    run_start = np.maximum.accumulate(np.where(repeats, 0, np.arange(n)))
    best = np.zeros(n + 1)  # the least cost of series[:t]
    start = np.zeros(n + 1, dtype=np.int64)  # where that partition's last segment starts
    starts = np.zeros(1, dtype=np.int64)
    for end in range(1, n + 1):
        total = sums[end] - sums[starts]
        cost = squares[end] - squares[starts] - total * total / (end - starts)
        cost = np.where(starts >= run_start[end - 1], 0.0, np.maximum(cost, 0.0))
        candidates = best[starts] + cost + penalty
        chosen = int(np.argmin(candidates))
        best[end], start[end] = candidates[chosen], starts[chosen]
        starts = np.append(starts[candidates <= best[end] + penalty], end)
    ends = [n]
    while start[ends[-1]] > 0:
        ends.append(int(start[ends[-1]]))
    return ends[::-1]
