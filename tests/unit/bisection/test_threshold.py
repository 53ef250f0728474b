"""The threshold a bisect step is judged by (bisection/threshold.py): parsed from what the user
typed, applied to one step's comparisons in the direction sought, and said in words."""

from __future__ import annotations

from dataclasses import replace

import pytest

from perflab.bisection.threshold import (
    SMALLEST_THRESHOLD,
    classify,
    direction_words,
    parse_threshold,
)
from perflab.records.bisect import Direction, StepState
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@pytest.mark.parametrize(
    ("text", "value"),
    [("2%", 0.02), ("0.5%", 0.005), ("0.02", 0.02), (" 3 % ", 0.03), ("0.01%", SMALLEST_THRESHOLD)],
)
def test_thresholds(text: str, value: float) -> None:
    assert parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "not a number"),
        ("nan", "not a number"),
        ("2", "ambiguous"),
        ("0%", "above 0"),
        ("-1%", "negative"),
        ("0.00001", "too small"),
    ],
)
def test_bad_thresholds(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_threshold(text)


def _compared(ratio: float, low: float, high: float) -> Comparison:
    verdict = Verdict.SLOWER if low > 1 else Verdict.FASTER if high < 1 else Verdict.EQUIVALENT
    return Comparison(
        benchmark="b",
        metric=Metric.INSTRUCTIONS,
        baseline="good",
        variant="c",
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict,
        baseline_value=100.0,
        variant_value=100.0 * ratio,
        unit="instructions",
    )


@pytest.mark.parametrize(
    ("ratio", "slower", "faster", "changed"),
    [
        # 7.3% more instructions: the change `slower` (the default) looks for, never `faster`
        (1.073, StepState.BAD, StepState.GOOD, StepState.BAD),
        (0.874, StepState.GOOD, StepState.BAD, StepState.BAD),
        (1.001, StepState.GOOD, StepState.GOOD, StepState.GOOD),
    ],
)
def test_the_direction_decides_which_change_is_bad(
    ratio: float, slower: StepState, faster: StepState, changed: StepState
) -> None:
    step = [_compared(ratio, ratio - 0.005, ratio + 0.005)]
    found = {d: classify(step, 0.02, d) for d in Direction}
    assert {d: f.state for d, f in found.items() if f is not None} == {
        Direction.SLOWER: slower,
        Direction.FASTER: faster,
        Direction.CHANGED: changed,
    }
    # a CI that reaches across the threshold is neither
    straddles = [_compared(0.98, 0.97, 0.99)]
    assert (outcome := classify(straddles, 0.02, Direction.FASTER)) is not None
    assert outcome.state is StepState.INCONCLUSIVE


def test_the_step_shows_the_benchmark_furthest_in_the_direction_sought() -> None:
    step = [_compared(1.05, 1.04, 1.06), _compared(1.30, 1.28, 1.32), _compared(0.6, 0.59, 0.61)]
    slower = classify(step, 0.02)
    assert slower is not None and slower.state is StepState.BAD and slower.ratio == 1.30
    changed = classify(step, 0.02, Direction.CHANGED)
    assert changed is not None and changed.ratio == 0.6  # log 0.6 is further than log 1.3


def test_invalid_comparisons_are_no_evidence() -> None:
    invalid = replace(_compared(1.5, 1.4, 1.6), verdict=Verdict.INVALID)
    assert classify([invalid], 0.02) is None
    assert classify([], 0.02) is None


def test_the_change_sought_in_words() -> None:
    assert direction_words(Direction.SLOWER, 0.02) == "slower by more than 2.0%"
    assert direction_words(Direction.CHANGED, 0.005) == "changed by more than 0.5%"
