"""Change points in a series of per-commit results: where the level steps.

PELT (Killick et al. 2012, as implemented by `ruptures`) with the least-squares cost on the
logarithm of the values (a step is a ratio), penalised as BIC: 2 log(n) sigma^2, sigma the
noise of the series estimated robustly from its successive differences (1.4826 MAD / sqrt 2,
so the steps themselves do not inflate it). Segments whose medians differ by less than
`min_step` (a ratio) are merged: a change point is a step worth a comparison. Each one is
only a candidate until a direct comparison of the commits either side confirms it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first point of the new level
    before: float  # the median of the level before
    after: float  # the median of the level after

    @property
    def ratio(self) -> float:
        return self.after / self.before


def noise(logs: np.ndarray) -> float:
    if len(logs) < 3:
        return 0.0
    differences = np.diff(logs)
    mad = float(np.median(np.abs(differences - np.median(differences))))
    return 1.4826 * mad / math.sqrt(2.0)


def change_points(values: Sequence[float], *, min_step: float = 0.02) -> list[ChangePoint]:
    """The indices where the series' level steps by more than `min_step` (0.02: 2%)."""
    if len(values) < 2 or any(v <= 0 or not math.isfinite(v) for v in values):
        return []
    import ruptures

    logs = np.log(np.asarray(values, dtype=float))
    sigma = noise(logs)
    # an exact series (instruction counts) has no noise: any true step pays for itself
    penalty = 2.0 * math.log(len(logs)) * max(sigma, 1e-9) ** 2
    found = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(logs.reshape(-1, 1))
    ends = [int(e) for e in found.predict(pen=penalty)]
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
