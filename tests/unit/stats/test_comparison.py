"""The verdict rule's one home (stats/comparison.py): the band test, the stricter rule for an
interval over one process per variant, `comparison_from` deciding by both, and a lens's reason
to withhold the verdict, and an output check's `invalid`."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from perflab.lenses.rss import RSS
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Withhold
from perflab.stats.comparison import (
    ONE_PROCESS_ALLOWANCE,
    SideValues,
    Subject,
    comparison_from,
    invalidate,
    verdict_for,
    withhold_verdict,
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


NOT_THE_QUANTITY = Withhold("not-the-quantity")
FEW = Withhold("few", differences_only=True)


@pytest.mark.parametrize(
    ("interval", "withhold", "withheld"),
    [
        ((1.02, 1.05), NOT_THE_QUANTITY, Verdict.SLOWER),
        ((0.95, 0.98), FEW, Verdict.FASTER),
        ((0.995, 1.005), NOT_THE_QUANTITY, Verdict.EQUIVALENT),
        # a reason for differences only lets `equivalent` stand; nothing to withhold from
        # `inconclusive`
        ((0.995, 1.005), FEW, None),
        ((0.9, 1.1), NOT_THE_QUANTITY, None),
    ],
)
def test_a_withheld_verdict_is_inconclusive_and_keeps_the_interval_s_verdict_and_the_reason(
    interval: tuple[float, float], withhold: Withhold, withheld: Verdict | None
) -> None:
    low, high = interval
    decided = comparison_from(
        (math.sqrt(low * high), low, high),
        Subject("b", Metric.COUNTERS, "a", "b"),
        SideValues(1.0, 1.0, "count"),
        equivalence_band=BAND,
        event="context-switches",
        withhold=withhold,
    )
    out = decided.to_json()
    if withheld is None:
        assert decided.verdict is verdict_for(low, high, BAND)
        assert (decided.interval_verdict, decided.withheld) == (None, None)
        assert "interval_verdict" not in out and "withheld_reason" not in out
        return
    assert decided.verdict is Verdict.INCONCLUSIVE and out["verdict"] == "inconclusive"
    assert (decided.interval_verdict, decided.withheld) == (withheld, withhold)
    assert (out["interval_verdict"], out["withheld_reason"]) == (withheld.value, withhold.reason)
    # the interval and the other fields are the comparison's as the interval gave it
    assert (decided.ci_low, decided.ci_high, out["event"]) == (low, high, "context-switches")


def test_a_verdict_withheld_after_the_fact_follows_the_same_rule() -> None:
    decided = comparison_from(
        (1.03, 1.02, 1.05),
        Subject("b", RSS, "a", "b"),
        SideValues(1.0, 1.03, "kB"),
        equivalence_band=BAND,
    )
    once = withhold_verdict(decided, NOT_THE_QUANTITY)
    assert once == comparison_from(
        (1.03, 1.02, 1.05),
        Subject("b", RSS, "a", "b"),
        SideValues(1.0, 1.03, "kB"),
        equivalence_band=BAND,
        withhold=NOT_THE_QUANTITY,
    )
    # withheld twice keeps what the interval said, not the first reason's `inconclusive`
    assert withhold_verdict(once, FEW) == once
    # an output check's `invalid` outranks any reason
    invalid = withhold_verdict(invalidate(decided, CHECK), NOT_THE_QUANTITY)
    assert invalid.verdict is Verdict.INVALID and invalid.withheld is None


CHECK = {"expression": "f()", "where": "element [0]", "differing": 1}


@pytest.mark.parametrize("withhold", [None, NOT_THE_QUANTITY])
def test_an_output_check_makes_a_comparison_invalid_and_keeps_the_interval_s_verdict(
    withhold: Withhold | None,
) -> None:
    decided = comparison_from(
        (1.03, 1.02, 1.05),
        Subject("b", Metric.TIME, "a", "b"),
        SideValues(1.0, 1.03, "ns"),
        equivalence_band=BAND,
        withhold=withhold,
    )
    invalid = invalidate(decided, CHECK)
    assert invalid.verdict is Verdict.INVALID and invalid.output_check == CHECK
    assert invalid.interval_verdict is Verdict.SLOWER and invalid.withheld == decided.withheld
    assert replace(invalid, verdict=decided.verdict, output_check=None, interval_verdict=None) == (
        replace(decided, interval_verdict=None)
    )
    out = invalid.to_json()
    assert (out["verdict"], out["output_check"]) == ("invalid", CHECK)
    # the JSON gives the interval's verdict only beside a lens's reason to withhold it
    assert ("interval_verdict" in out) is (withhold is not None)
