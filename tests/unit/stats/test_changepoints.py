"""Change points of a per-commit series: exact steps (instruction counts) and noisy ones."""

from __future__ import annotations

import random

import pytest

from perflab.stats.changepoints import change_points


def test_exact_steps_are_found_where_they_are() -> None:
    (point,) = change_points([100.0] * 5 + [150.0] * 5)
    assert point.index == 5 and point.ratio == pytest.approx(1.5)
    assert [p.index for p in change_points([100.0] * 63 + [190.0])] == [63]  # the last commit
    steps = change_points([100.0] * 10 + [120.0] * 10 + [100.0] * 10)
    assert [p.index for p in steps] == [10, 20]


def test_steps_below_the_minimum_and_noise_are_not_change_points() -> None:
    assert change_points([100.0, 100.0, 101.0, 100.0, 100.5], min_step=0.02) == []
    rng = random.Random(1)
    assert change_points([100 * rng.gauss(1, 0.03) for _ in range(60)]) == []


def test_a_noisy_step_is_found_near_its_place() -> None:
    rng = random.Random(2)
    values = [100 * rng.gauss(1, 0.02) for _ in range(30)] + [
        115 * rng.gauss(1, 0.02) for _ in range(30)
    ]
    (point,) = change_points(values)
    assert abs(point.index - 30) <= 1 and point.ratio == pytest.approx(1.15, rel=0.03)


def test_the_search_ends_where_ruptures_pelt_ends() -> None:
    """The same partition as `ruptures.Pelt(model="l2", min_size=1, jump=1)`: on noisy series,
    on exact ones (the penalty near 0) and on counts that differ by one now and then."""
    import math

    import numpy as np

    ruptures = pytest.importorskip("ruptures")

    from perflab.stats.changepoints import noise, pelt_ends

    rng = random.Random(5)
    for trial in range(18):
        level, values = 100.0, []
        for _ in range(rng.choice([2, 5, 17, 30])):
            if rng.random() < 0.08:
                level *= rng.choice([0.7, 0.97, 1.02, 1.3])
            exact = [level, float(round(level * 1000 + rng.choice([0, 0, 1, -1])))]
            values.append([*exact, level * rng.gauss(1, 0.01)][trial % 3])
        logs = np.log(np.asarray(values))
        penalty = 2.0 * math.log(len(logs)) * max(noise(logs), 1e-9) ** 2
        found = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(logs.reshape(-1, 1))
        assert pelt_ends(logs, penalty) == [int(e) for e in found.predict(pen=penalty)], values


def test_a_one_commit_level_between_two_exact_steps_is_its_own() -> None:
    # xxHash v0.8.0 -> v0.8.1 (+7.1% instructions) merged, then a commit that doubles the work:
    # the steps made half the successive differences, so they were taken for noise and the
    # merge's 7.1% folded into the doubling (2.143)
    counts = [1_604_503_741, 1_604_503_741, 1_719_063_741, 3_437_983_741, 3_437_983_741]
    found = change_points(counts)
    assert [point.index for point in found] == [2, 3]
    assert found[0].ratio == pytest.approx(1.0714, abs=1e-4)
    assert found[1].ratio == pytest.approx(2.0, abs=1e-3)
