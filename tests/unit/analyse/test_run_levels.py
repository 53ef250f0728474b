"""A series measured in several runs, levelled through the commits consecutive runs share: a
step of the machine's load at a run boundary is gone, a step of the code inside a run stays,
identical code gives no candidate, and counts are left as measured."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from perflab.analyse.run_levels import FigureInRun, levelled_across_runs
from perflab.records.kinds import Metric
from perflab.records.workflow_results import HistoryPoint
from perflab.stats.changepoints import change_points

COMMITS = [f"{i:02d}" + "c" * 38 for i in range(24)]
PART = 8  # commits per run: runs 1, 2, 3 begin at commits 0, 8, 16
LOADS = {1: 1.0, 2: 1.08, 3: 1.08 * 0.95}  # each run's level: the machine's load then


def _code(index: int, *, step_at: int | None) -> float:
    """The code's own time at a commit: 100 ns, 3% more from `step_at`, and a little noise."""
    noise = 1.0 + random.Random(index).uniform(-0.003, 0.003)
    return 100.0 * noise * (1.03 if step_at is not None and index >= step_at else 1.0)


def _measured(
    step_at: int | None, loads: Mapping[int, float] = LOADS
) -> dict[tuple[str, int], float]:
    """(commit, run) -> its figure: each run measures its part, and every run after the first
    the last commit of the run before again first."""
    figures = {}
    for run, load in loads.items():
        start = (run - 1) * PART
        for index in range(max(start - 1, 0), start + PART):
            # the same commit in two runs: the load differs, and so does the noise a little
            again = 1.001 if index == start - 1 else 1.0
            figures[(COMMITS[index], run)] = _code(index, step_at=step_at) * load * again
    return figures


def _points(figures: Mapping[tuple[str, int], float], runs: Sequence[int]) -> list[HistoryPoint]:
    """A point per commit, valued from the run `runs` names for it."""
    return [
        HistoryPoint(commit, f"s{i}", f"t{i}", figures[(commit, run)], "ns", run)
        for i, (commit, run) in enumerate(zip(COMMITS, runs, strict=True))
    ]


def _in_run(figures: Mapping[tuple[str, int], float]) -> FigureInRun:
    return lambda point, run_id: figures.get((point.commit, run_id))


FRESH = [1 + i // PART for i in range(len(COMMITS))]  # the shared commit valued by its first run


def _steps(points: Sequence[HistoryPoint]) -> list[int]:
    return [c.index for c in change_points([p.series_value or 0.0 for p in points])]


def test_a_step_of_load_at_a_run_boundary_is_gone_and_a_step_of_the_code_stays() -> None:
    figures = _measured(step_at=20)
    points = _points(figures, FRESH)
    assert _steps(points) == [8, 16, 20]  # as measured: both boundaries look like changes
    levelled = levelled_across_runs(points, _in_run(figures), Metric.TIME)
    [change] = change_points([p.series_value or 0.0 for p in levelled.points])
    assert change.index == 20 and change.ratio == pytest.approx(1.03, rel=0.005)
    assert [(s.run_id, s.against_run, s.shared_commit) for s in levelled.scales] == [
        (2, 1, COMMITS[7]),
        (3, 2, COMMITS[15]),
    ]
    assert levelled.scales[0].scale == pytest.approx(1 / (1.08 * 1.001))
    # the values as measured stay; the first run's are its own level
    assert [p.value for p in levelled.points] == [p.value for p in points]
    assert all(p.levelled_value is None for p in levelled.points[:PART])
    assert [s.moved for s in levelled.scales] == [True, True]
    assert levelled.note is not None and "put on the level of the first (run 1)" in levelled.note
    assert "2 of 2 moved beyond the noise" in levelled.note
    assert "largest scale -7.5%, run 2 through 07cccccccc" in levelled.note


def test_identical_code_at_every_commit_has_no_candidate_once_levelled() -> None:
    figures = _measured(step_at=None)
    points = _points(figures, FRESH)
    assert _steps(points) == [8, 16]
    levelled = levelled_across_runs(points, _in_run(figures), Metric.TIME)
    assert _steps(levelled.points) == []


def test_a_shared_commit_that_moved_within_the_noise_leaves_its_run_as_measured() -> None:
    # the second run 0.2% slower: a figure's own noise (0.2% here) could say as much, and
    # scaling a whole run by a ratio that is noise would move it by that noise
    figures = _measured(step_at=None, loads={1: 1.0, 2: 1.002, 3: 1.08})
    levelled = levelled_across_runs(_points(figures, FRESH), _in_run(figures), Metric.TIME)
    [still, moved] = levelled.scales
    assert not still.moved and still.scale == 1.0
    assert still.shared_ratio == pytest.approx(1 / (1.002 * 1.001))
    assert all(p.levelled_value is None for p in levelled.points[: 2 * PART])
    assert moved.moved and moved.scale == pytest.approx(1.002 / (1.08 * 1.001))
    assert _steps(levelled.points) == []


def test_a_rerun_reading_the_shared_commit_from_the_later_run_levels_alike() -> None:
    # the store's latest figure of a shared commit is the later run's
    figures = _measured(step_at=20)
    rerun = [2 if i == PART - 1 else 3 if i == 2 * PART - 1 else run for i, run in enumerate(FRESH)]
    fresh = levelled_across_runs(_points(figures, FRESH), _in_run(figures), Metric.TIME)
    again = levelled_across_runs(_points(figures, rerun), _in_run(figures), Metric.TIME)
    assert [p.series_value for p in again.points] == pytest.approx(
        [p.series_value for p in fresh.points]
    )


def test_counts_are_left_as_measured() -> None:
    figures = _measured(step_at=20)
    points = _points(figures, FRESH)
    levelled = levelled_across_runs(points, _in_run(figures), Metric.INSTRUCTIONS)
    assert levelled.points == tuple(points) and levelled.scales == () and levelled.note is None


def test_a_run_that_shares_no_commit_is_shown_as_measured_and_said() -> None:
    figures = {k: v for k, v in _measured(step_at=None).items() if k != (COMMITS[15], 3)}
    levelled = levelled_across_runs(_points(figures, FRESH), _in_run(figures), Metric.TIME)
    assert [s.run_id for s in levelled.scales] == [2]
    assert all(p.levelled_value is None for p in levelled.points[2 * PART :])
    assert levelled.note is not None and "run(s) 3 share no commit" in levelled.note


def test_one_run_or_several_nodes_are_left_alone() -> None:
    figures = _measured(step_at=None)
    one = _points(figures, FRESH)[:PART]
    assert levelled_across_runs(one, _in_run(figures), Metric.TIME).scales == ()
    nodes = [
        HistoryPoint(p.commit, p.subject, p.tree, p.value, p.unit, p.run_id, node=f"n{p.run_id}")
        for p in _points(figures, FRESH)
    ]
    across = levelled_across_runs(nodes, _in_run(figures), Metric.TIME)
    assert across.scales == () and across.note is not None and "several nodes" in across.note
