"""A series measured in several runs, put on one level through the commits the runs share.

A lens whose figures are wall time moves with the machine's load between runs: a history
measured in parts (one run per part) at a changing load shows steps of level exactly where one
run ends and the next begins. Consecutive runs of a history share a commit (the next run measures
again the last commit of the one before), so the ratio of that commit's two figures is how far
the later run's level moved. Where it moved beyond the series' noise (two standard deviations
of a difference of two figures, the noise estimated robustly from consecutive points of one
run), the later run's values are scaled by it before change points are looked for; within the
noise the run is taken to be on the earlier one's level, since scaling by a ratio that is noise
would move a whole run by that noise. Counts (instructions) do not move with the load and are
left as measured. The figures as measured stay as they are: levelling is analysis, its factors
said in a note and kept beside the values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from perflab.lenses.registry import wall_time_metrics
from perflab.records.kinds import Metric
from perflab.records.workflow_results import HistoryPoint, RunScale
from perflab.stats.changepoints import difference_noise

# a shared commit's two figures differ by more than this many standard deviations of the
# difference of two figures: the run's level moved (about 1 in 20 by noise alone)
MOVED_SIGMAS = 2.0

_ACROSS_NODES = "the points span several nodes: their runs are not levelled through shared commits"

# (a point, a run) -> the figure of the point's commit in that run; None: the run did not
# measure it
FigureInRun = Callable[[HistoryPoint, int], float | None]


@dataclass(frozen=True)
class LevelledPoints:
    """The points with `levelled_value` set where their run's level was moved, the factor of
    each run that was levelled, and the note saying so (None: nothing to say)."""

    points: tuple[HistoryPoint, ...]
    scales: tuple[RunScale, ...]
    note: str | None


def levelled_across_runs(
    points: Sequence[HistoryPoint], figure_in_run: FigureInRun, metric: Metric
) -> LevelledPoints:
    """The points' values on the level of the first run among them, where `metric`'s level
    moves with the machine and the points come from several runs of one node (across nodes,
    `perflab.analyse.places` normalises them). Each later run, in the order the series
    reaches it, is scaled by the figure of a commit shared with a run already levelled over
    its own figure of it (the nearest such commit at or before the run's first point) where
    the two differ beyond the noise (MOVED_SIGMAS), else keeps that run's level."""
    runs = list(
        dict.fromkeys(p.run_id for p in points if p.run_id is not None and p.value is not None)
    )
    if metric not in wall_time_metrics() or len(runs) < 2:
        return LevelledPoints(tuple(points), (), None)
    if any(p.node for p in points):  # several nodes: `places` says what may be compared
        return LevelledPoints(tuple(points), (), _ACROSS_NODES)
    factors = {runs[0]: 1.0}
    scales: list[RunScale] = []
    unlinked: list[int] = []
    moved_beyond = MOVED_SIGMAS * math.sqrt(2.0) * _within_run_noise(points)
    for run_id in runs[1:]:
        first = next(i for i, p in enumerate(points) if p.run_id == run_id)
        scale = _linked(points, (first, run_id), factors, figure_in_run, moved_beyond)
        if scale is None:
            unlinked.append(run_id)
            factors[run_id] = 1.0
        else:
            factors[run_id] = scale.scale
            scales.append(scale)
    levelled = tuple(
        replace(p, levelled_value=p.value * factors[p.run_id])
        if p.value is not None and p.run_id is not None and factors.get(p.run_id, 1.0) != 1.0
        else p
        for p in points
    )
    note = _levels_note(runs, scales, unlinked, moved_beyond)
    return LevelledPoints(levelled, tuple(scales), note)


def _within_run_noise(points: Sequence[HistoryPoint]) -> float:
    """The noise of one point's log value, from the differences of consecutive points of one
    run (a difference across runs holds the very moves of level being looked for)."""
    differences = [
        math.log(b.value / a.value)
        for a, b in zip(points, points[1:], strict=False)
        if a.run_id == b.run_id and a.value and b.value and a.run_id is not None
    ]
    return difference_noise(np.asarray(differences, dtype=float))


def _linked(
    points: Sequence[HistoryPoint],
    at: tuple[int, int],
    factors: dict[int, float],
    figure_in_run: FigureInRun,
    moved_beyond: float,
) -> RunScale | None:
    """The factor of the run `at` names (its first point's index, its id) onto the first
    run's level: through the nearest commit at or before its first point that it and a run
    already levelled both measured; that run's own factor where the two figures differ by
    `moved_beyond` (a log ratio) or less."""
    first, run_id = at
    for point in reversed(points[: first + 1]):
        here = figure_in_run(point, run_id)
        if not here:
            continue
        for other, factor in factors.items():
            there = figure_in_run(point, other)
            if there:
                ratio = there / here
                moved = abs(math.log(ratio)) > moved_beyond
                scale = factor * ratio if moved else factor
                return RunScale(run_id, other, point.commit, scale, ratio, moved)
    return None


def _levels_note(
    runs: list[int], scales: list[RunScale], unlinked: list[int], moved_beyond: float
) -> str | None:
    """ "the values of 3 runs were put on the level of the first (run 4) through the commits
    consecutive runs share ... (2 of 2 moved beyond the noise of 0.6%; largest scale -7.5%,
    run 6 through 0a1b2c3d4e) ..."."""
    said = []
    if scales:
        largest = max(scales, key=lambda s: abs(s.scale - 1.0))
        moved = sum(s.moved for s in scales)
        said.append(
            f"the values of {len(runs)} runs were put on the level of the first (run "
            f"{runs[0]}) through the commits consecutive runs share: times move with the "
            f"machine's load between runs ({moved} of {len(scales)} moved beyond the noise of "
            f"{math.expm1(moved_beyond):.1%}; largest scale {largest.scale - 1.0:+.1%}, run "
            f"{largest.run_id} through {largest.shared_commit[:10]}); the values as measured "
            "are kept beside them"
        )
    if unlinked:
        named = ", ".join(str(r) for r in unlinked)
        said.append(
            f"run(s) {named} share no commit with an earlier run of the series: their values "
            "are shown as measured, and a step where one begins may be the machine's load "
            "(each change point is confirmed by a direct comparison)"
        )
    return "; ".join(said) or None
