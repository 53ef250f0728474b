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
