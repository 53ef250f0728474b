"""Two lenses measured on one pair that point different ways, as a workflow's answer carries it:
the lens that decides (the first of --metric) and another speed lens beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.records.kinds import Metric, Verdict


@dataclass(frozen=True, kw_only=True)
class LensDisagreement:
    """The deciding lens's comparison of a pair and another lens's that disagrees with it: one
    says more, the other less; or one moved beyond the threshold while the other saw no change."""

    gate: Metric  # the lens that decides
    gate_ratio: float
    gate_verdict: Verdict
    other: Metric
    other_ratio: float
    other_ci_low: float
    other_ci_high: float
    other_verdict: Verdict
    decisive: bool  # the other lens's whole CI lies beyond the threshold, its own way
    # each lens's figure counts things (the descriptors' `Figures.countable`, named by the
    # analysis): its fall is "fewer", not "less"
    gate_countable: bool = False
    other_countable: bool = False

    @property
    def decisively_faster(self) -> bool:
        """The other lens says faster beyond the threshold, whatever its noise."""
        return self.decisive and self.other_ratio < 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": str(self.gate),
            "ratio": self.gate_ratio,
            "verdict": str(self.gate_verdict),
            "other_metric": str(self.other),
            "other_ratio": self.other_ratio,
            "other_ci_low": self.other_ci_low,
            "other_ci_high": self.other_ci_high,
            "other_verdict": str(self.other_verdict),
            "decisive": self.decisive,
        }
