"""One variant's samples summarised (their per-iteration value, their spread) and two variants'
repeated counts compared. Pure: values in, numbers out."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from perflab.records.model import Sample


def mean_per_iteration(samples: Iterable[Sample]) -> float:
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


# Worker processes of one variant whose counts differ by more than this are reported: above the
# residue by which processes of the same code differ (same_code.py's COUNT_TOLERANCE is the same
# figure), below the levels a process's heap can set (docs/statistics.md, "Counts whose unit is
# the process").
PROCESS_TOLERANCE = 1e-3


@dataclass(frozen=True)
class ProcessLevels:
    """What separate worker processes of one variant counted: each process's level (the median
    of its repeats), how far the levels are apart and how far repeats inside one process are
    (both relative: largest over smallest, minus one)."""

    levels: tuple[float, ...]
    between: float
    within: float

    @property
    def disagree(self) -> bool:
        """The processes settled at different levels, beyond the residue of a count."""
        return self.between > max(PROCESS_TOLERANCE, 2 * self.within)


def _apart(values: Sequence[float]) -> float:
    low = min(values)
    return max(values) / low - 1 if low > 0 else math.inf


def process_levels(processes: Sequence[Sequence[float]]) -> ProcessLevels | None:
    """The levels of a variant's worker processes (each a sequence of per-iteration repeats);
    None with fewer than two processes, when nothing can be said about them."""
    groups = [list(p) for p in processes if p]
    if len(groups) < 2:
        return None
    levels = tuple(statistics.median(g) for g in groups)
    return ProcessLevels(
        levels=levels,
        between=_apart(levels),
        within=max(_apart(g) for g in groups),
    )


def repeats_vary_alike(processes: Sequence[Sequence[float]]) -> bool:
    """Whether two processes or more repeated alike: the same number of repeats, each repeat
    the same share of its process's level in every process (within PROCESS_TOLERANCE), and not
    all equal. Then the spread inside a process is the statement's own course, not noise."""
    groups = [list(p) for p in processes if p]
    if len(groups) < 2 or len({len(g) for g in groups}) > 1 or len(groups[0]) < 2:
        return False
    levels = [statistics.median(g) for g in groups]
    if min(levels) <= 0:
        return False
    shapes = [[v / level for v in g] for g, level in zip(groups, levels, strict=True)]
    same_course = all(
        abs(share - first) <= PROCESS_TOLERANCE
        for shape in shapes
        for share, first in zip(shape, shapes[0], strict=True)
    )
    return same_course and max(_apart(g) for g in groups) > PROCESS_TOLERANCE


def process_count_interval(processes: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """(value, low, high) of one variant's own counts whose unit is the worker process, as one
    side of `process_ratio_interval`: the median repeat, an interval spanning every repeat (its
    processes' levels, where they repeated alike), widened by how far apart its processes
    settled. nan when nothing was counted."""
    repeats = [v for process in processes for v in process]
    if not repeats:
        return math.nan, math.nan, math.nan
    levels = process_levels(processes)
    widening = 1 + levels.between if levels is not None and math.isfinite(levels.between) else 1.0
    spanned = levels.levels if levels is not None and repeats_vary_alike(processes) else repeats
    value = statistics.median(repeats)
    return value, min(*spanned, value) / widening, max(*spanned, value) * widening


def process_ratio_interval(
    baseline: Sequence[Sequence[float]], variant: Sequence[Sequence[float]]
) -> tuple[float, float, float]:
    """(ratio, low, high) of counts whose unit is the worker process (each side: its processes'
    repeats). The interval of every repeat (`ratio_interval`), or of the processes' levels where
    two processes or more a side repeated alike (`repeats_vary_alike`), widened on both sides by
    how far apart each side's processes settled: a verdict then needs a difference larger than
    what separate processes of the *same* code differ by.

    Why: identical code counts differently by process (glibc's malloc state, the heap layout),
    so the bare interval of processes whose levels differ beyond the band excludes 1 in A/A
    pairs far more often than its confidence says; widened by both sides' spreads it does so
    rarely (the simulated rates: docs/statistics.md, "Counts whose unit is the process"). A side
    with one process widens nothing: nothing is known of its spread (a command's repeats are
    each a process already)."""
    before = [v for process in baseline for v in process]
    after = [v for process in variant for v in process]
    ratio, low, high = ratio_interval(before, after)
    if math.isnan(ratio):
        return ratio, low, high
    sides = process_levels(baseline), process_levels(variant)
    if sides[0] and sides[1] and repeats_vary_alike([*baseline, *variant]):
        # the repeats' spread is where each repeat falls in the run, the same in every process
        # (a first call's extra work): the processes' levels are what differs between them
        _, low, high = ratio_interval(sides[0].levels, sides[1].levels)
        low, high = min(low, ratio), max(high, ratio)
    widening = 1.0
    for levels in sides:
        if levels is not None and math.isfinite(levels.between):
            widening *= 1 + levels.between
    return ratio, low / widening, high * widening
