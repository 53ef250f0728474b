"""Two lenses that point different ways on one pair (records/lens_agreement.py): decisively
faster only beyond the threshold, and its JSON."""

from __future__ import annotations

import dataclasses

from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement

SLOWER_BY_TIME = LensDisagreement(
    gate=Metric.TIME,
    gate_ratio=1.04,
    gate_verdict=Verdict.SLOWER,
    other=Metric.INSTRUCTIONS,
    other_ratio=0.95,
    other_ci_low=0.94,
    other_ci_high=0.96,
    other_verdict=Verdict.FASTER,
    decisive=True,
)


def test_the_other_lens_is_decisively_faster_only_beyond_the_threshold_and_below_one() -> None:
    assert SLOWER_BY_TIME.decisively_faster
    assert not dataclasses.replace(SLOWER_BY_TIME, decisive=False).decisively_faster
    slower = dataclasses.replace(SLOWER_BY_TIME, other_ratio=1.2, other_verdict=Verdict.SLOWER)
    assert not slower.decisively_faster


def test_its_json_names_both_lenses() -> None:
    assert SLOWER_BY_TIME.to_json() == {
        "metric": "time",
        "ratio": 1.04,
        "verdict": "slower",
        "other_metric": "instructions",
        "other_ratio": 0.95,
        "other_ci_low": 0.94,
        "other_ci_high": 0.96,
        "other_verdict": "faster",
        "decisive": True,
    }
