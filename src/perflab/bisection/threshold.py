"""The threshold a bisect step is judged by. It is parsed from what the user typed
(`parse_threshold`), applied to one step's comparisons (`classify`: bad when a benchmark's whole CI
lies beyond it, good when none reaches beyond it, else inconclusive) and said in words. Pure;
`check` judges its gate by the same rule."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from perflab.records.bisect import Direction, StepOutcome, StepState
from perflab.records.errors import ConfigError
from perflab.records.kinds import Verdict
from perflab.records.model import Comparison

_NUMBER = re.compile(r"^\s*(\S+?)\s*(%?)\s*$")
# a smaller step than 0.01% is below what any lens resolves between two builds: such a
# threshold would call every difference a regression
SMALLEST_THRESHOLD = 0.0001
_ACCEPTED = "a percentage from 0.01% (--threshold 2%) or a fraction below 1 (--threshold 0.02)"


def parse_threshold(text: str) -> float:
    """`2%` or `0.02` -> 0.02; a bare number of 1 or more is refused as ambiguous, a negative
    one or one below 0.01% as meaningless."""
    found = _NUMBER.match(text)
    try:
        value = float(found.group(1)) if found else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError(f"the threshold {text!r} is not a number", hint=f"give {_ACCEPTED}")
    assert found is not None
    if found.group(2):
        value /= 100.0
    elif value >= 1:
        raise ConfigError(
            f"the threshold {text!r} is ambiguous (a fraction of 1 or more)",
            hint=f"write it as a percentage: --threshold {found.group(1)}%",
        )
    if value < 0:
        raise ConfigError(
            f"the threshold {text!r} is negative: it is how much worse counts as a regression",
            hint=f"give {_ACCEPTED}",
        )
    if value < SMALLEST_THRESHOLD:
        raise ConfigError(
            f"the threshold {text!r} must be above 0"
            if value == 0
            else f"the threshold {text!r} is too small: below 0.01%, every difference counts",
            hint=f"give {_ACCEPTED}",
        )
    return value


def classify(
    comparisons: Sequence[Comparison], threshold: float, direction: Direction = Direction.SLOWER
) -> StepOutcome | None:
    """What the comparisons of one step (the commit against GOOD, one metric, every benchmark)
    say: bad when one benchmark's whole CI lies beyond the threshold in `direction`, good when
    no benchmark's CI reaches beyond it, else inconclusive. None when there is no comparison
    (nothing measured)."""
    main = [c for c in comparisons if c.verdict is not Verdict.INVALID]
    if not main:
        return None
    ways = (Direction.SLOWER, Direction.FASTER) if direction is Direction.CHANGED else (direction,)
    limit = 1.0 + threshold
    wholly = [c for c in main if any(_beyond(c, limit, way)[0] for way in ways)]
    if wholly:
        state = StepState.BAD
    elif not any(_beyond(c, limit, way)[1] for c in main for way in ways):
        state = StepState.GOOD
    else:
        state = StepState.INCONCLUSIVE
    shown = max(wholly or main, key=lambda c: _toward(c.ratio, direction))
    return StepOutcome(state, shown.ratio, shown.ci_low, shown.ci_high)


def _beyond(c: Comparison, limit: float, way: Direction) -> tuple[bool, bool]:
    """Whether the ratio's CI lies wholly, and partly, beyond the threshold `way`."""
    if way is Direction.SLOWER:
        return c.ci_low > limit, c.ci_high > limit
    return c.ci_high < 1.0 / limit, c.ci_low < 1.0 / limit


def _toward(ratio: float, direction: Direction) -> float:
    """How far a ratio lies in the direction sought (the step shows its furthest benchmark)."""
    distance = math.log(ratio) if ratio > 0 else -math.inf
    if direction is Direction.FASTER:
        return -distance
    return abs(distance) if direction is Direction.CHANGED else distance


def direction_words(direction: Direction, threshold: float) -> str:
    """The change sought, in words: "slower by more than 2.0%"."""
    if direction is Direction.CHANGED:
        return f"changed by more than {threshold:.1%}"
    return f"{direction} by more than {threshold:.1%}"
