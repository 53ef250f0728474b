"""The profile lens's part in a pair's explanation (lenses/profile/account.py): the difference
in wall time per iteration under perf, made of each function's self share of the samples."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from perflab.lenses.profile.account import accounting
from perflab.records.accounting import Presence
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@dataclass(frozen=True)
class Symbols:
    """A comparison's details as the profile lens writes them: its symbols' self shares."""

    rows: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"symbols": list(self.rows)}


def compared(before: float, after: float, verdict: Verdict, *rows: dict[str, Any]) -> Comparison:
    return Comparison(
        "b", Metric.PROFILE, "A", "B", after / before, 0.9, 1.1, verdict, before, after, "ns",
        details=Symbols(rows),
    )  # fmt: skip


def test_the_difference_is_made_of_the_functions_whose_time_moved() -> None:
    said = accounting(
        compared(
            1000.0, 1200.0, Verdict.SLOWER,
            {"name": "work", "object": "prog", "baseline_share": 0.5, "variant_share": 0.5},
            {"name": "memset", "object": "libc.so.6", "baseline_share": 0.5, "variant_share": 0.0},
            {"name": "memcpy", "object": "libc.so.6", "baseline_share": 0.0, "variant_share": 0.5},
            {"name": "same", "baseline_share": 0.0, "variant_share": 0.0},
        )
    )  # fmt: skip
    assert (said.source, said.tool, said.unit, said.settled) == ("profile", "perf", "ns", False)
    assert said.what == "20.0% more wall time per iteration under perf (1,000 → 1,200 ns)"
    parts = {p.name: p for p in said.parts}
    assert set(parts) == {"work", "memset", "memcpy"}  # `same` did not move
    assert parts["work"].delta == pytest.approx(100.0) and parts["work"].presence is Presence.BOTH
    assert parts["memset"].presence is Presence.BASELINE_ONLY
    assert parts["memcpy"].presence is Presence.VARIANT_ONLY
    assert parts["memcpy"].evidence.startswith("perf: 0.0% → 50.0% of the samples (self)")


@pytest.mark.parametrize("verdict", [Verdict.EQUIVALENT, Verdict.INCONCLUSIVE])
def test_no_difference_the_profile_can_tell_is_settled_without_parts(verdict: Verdict) -> None:
    said = accounting(compared(1000.0, 1010.0, verdict, {"name": "x", "variant_share": 1.0}))
    assert said.settled and said.parts == ()
    assert said.what.startswith("No difference the profile can tell")
