"""The verdict rule's one home (stats/comparison.py): the band test, the stricter rule for an
interval over one process per variant, and `comparison_from` deciding by both."""

from __future__ import annotations

import math

import pytest

from perflab.records.kinds import Metric, Verdict
from perflab.stats.comparison import (
    ONE_PROCESS_ALLOWANCE,
    SideValues,
    Subject,
    comparison_from,
    verdict_for,
)

BAND = 0.01


@pytest.mark.parametrize(
    ("interval", "verdict", "one_process_verdict"),
    [
        # inside the band: equivalent, but two processes that agree say nothing of a small change
        ((0.995, 1.005), Verdict.EQUIVALENT, Verdict.INCONCLUSIVE),
        # excludes 1 but within what processes of the same code differ by
        ((1.02, 1.05), Verdict.SLOWER, Verdict.INCONCLUSIVE),
        ((0.95, 0.98), Verdict.FASTER, Verdict.INCONCLUSIVE),
        # beyond the allowance on either side
        ((1 + ONE_PROCESS_ALLOWANCE + 0.01, 1.3), Verdict.SLOWER, Verdict.SLOWER),
        ((0.5, 1 / (1 + ONE_PROCESS_ALLOWANCE) - 0.01), Verdict.FASTER, Verdict.FASTER),
        ((0.9, 1.1), Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE),
        ((math.nan, math.nan), Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE),
    ],
)
def test_the_band_rule_and_the_one_process_rule(
    interval: tuple[float, float], verdict: Verdict, one_process_verdict: Verdict
) -> None:
    low, high = interval
    assert verdict_for(low, high, BAND) is verdict
    assert verdict_for(low, high, BAND, one_process=True) is one_process_verdict


@pytest.mark.parametrize("one_process", [False, True])
def test_a_comparison_is_decided_by_the_rule(one_process: bool) -> None:
    comparison = comparison_from(
        (1.03, 1.02, 1.05),
        Subject("b", Metric.TIME, "a", "b"),
        SideValues(1.0, 1.03, "ns"),
        equivalence_band=BAND,
        one_process=one_process,
    )
    assert comparison.verdict is verdict_for(1.02, 1.05, BAND, one_process=one_process)
    assert (comparison.ratio, comparison.ci_low, comparison.ci_high) == (1.03, 1.02, 1.05)
