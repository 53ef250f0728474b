"""The instructions lens's part in a pair's explanation (lenses/instructions/account.py): the
difference in instructions per iteration made of each function's self instructions, nothing to
account for where the counts agree, and every function valgrind ran."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from perflab.lenses.instructions import RESIDUE
from perflab.lenses.instructions.account import accounting, tool_rows
from perflab.records.accounting import Presence
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@dataclass(frozen=True)
class Counted:
    """A comparison's details as JSON, as a run read back from an export has them."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


FUNCTIONS = [
    {"name": "work", "object": "prog", "baseline": 100.0, "variant": 150.0, "delta": 50.0},
    {"name": "memcpy", "object": "libc.so.6", "variant_object": "libc-2.35.so",
     "baseline": 0.0, "variant": 30.0, "delta": 30.0, "presence": "variant_only"},
    {"name": "handshake", "baseline": 10.0, "variant": 11.0, "delta": 1.0},
]  # fmt: skip


def compared(before: float, after: float, low: float, high: float) -> Comparison:
    details = Counted(
        {"baseline_per_iteration": before, "variant_per_iteration": after, "functions": FUNCTIONS}
    )
    return Comparison(
        "b", Metric.INSTRUCTIONS, "A", "B", after / before, low, high, Verdict.SLOWER,
        before, after, "instructions", details=details,
    )  # fmt: skip


def test_the_difference_is_made_of_the_functions_beyond_the_handshakes_residue() -> None:
    said = accounting(compared(1000.0, 1080.0, 1.07, 1.09))
    assert said.what == "8.0% more instructions per iteration (1,000 → 1,080)"
    assert said.counts_work and not said.settled and said.tool == "callgrind"
    assert [p.name for p in said.parts] == ["work", "memcpy"]  # handshake's 1 < RESIDUE
    assert RESIDUE > 1.0
    memcpy = said.parts[1]
    assert memcpy.obj == "libc.so.6 → libc-2.35.so" and memcpy.presence is Presence.VARIANT_ONLY
    assert memcpy.evidence.endswith("(ran in the variant only)")


@pytest.mark.parametrize(
    ("after", "low", "high"),
    [(1000.5, 1.0, 1.001), (1010.0, 0.99, 1.02)],
    ids=["within-0.1%", "interval-holds-1"],
)
def test_counts_that_agree_leave_nothing_to_account_for(
    after: float, low: float, high: float
) -> None:
    said = accounting(compared(1000.0, after, low, high))
    assert said.settled and said.parts == () and "nothing to account for" in said.what


def test_every_function_valgrind_ran_from_the_exported_rows() -> None:
    rows = tool_rows(compared(1000.0, 1080.0, 1.07, 1.09))
    assert [(r.name, r.presence) for r in rows.rows] == [
        ("work", Presence.BOTH),
        ("memcpy", Presence.VARIANT_ONLY),
        ("handshake", Presence.BOTH),
    ]
