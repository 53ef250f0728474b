"""The profile lens's part in a pair's explanation: the difference in wall time per iteration
under perf and each function's self share of the samples, from its comparison's details."""

from __future__ import annotations

import math
from typing import Any

from perflab.records.accounting import Accounting, FunctionPart, Presence
from perflab.records.kinds import Verdict
from perflab.records.model import Comparison


def accounting(comparison: Comparison) -> Accounting:
    """The difference and the functions it is made of; settled where the profile cannot tell
    one."""
    data: dict[str, Any] = comparison.details.to_json() if comparison.details is not None else {}
    before, after = comparison.baseline_value, comparison.variant_value
    difference = after - before
    if comparison.verdict in (Verdict.EQUIVALENT, Verdict.INCONCLUSIVE) or not (
        math.isfinite(before) and math.isfinite(after)
    ):
        what = (
            f"No difference the profile can tell in wall time per iteration under perf "
            f"({before:,.0f} and {after:,.0f} ns, {comparison.verdict})"
        )
        return _in_ns(before, after, what, settled=True)
    parts = (_part(row, before, after) for row in data.get("symbols") or [])
    what = (
        f"{abs(difference) / before:.1%} {'less' if difference < 0 else 'more'} wall time per "
        f"iteration under perf ({before:,.0f} → {after:,.0f} ns)"
    )
    return _in_ns(before, after, what, parts=tuple(p for p in parts if p is not None))


def _in_ns(
    before: float,
    after: float,
    what: str,
    *,
    settled: bool = False,
    parts: tuple[FunctionPart, ...] = (),
) -> Accounting:
    return Accounting(
        source="profile",
        unit="ns",
        amount="ns",
        tool="perf",
        before=before,
        after=after,
        what=what,
        settled=settled,
        parts=parts,
    )


def _part(row: dict[str, Any], before: float, after: float) -> FunctionPart | None:
    """One symbol's self share of the samples as ns per iteration; None where it did not move."""
    b_share = float(row.get("baseline_share") or 0.0)
    v_share = float(row.get("variant_share") or 0.0)
    before_row, after_row = b_share * before, v_share * after
    if before_row == after_row:
        return None
    evidence = (
        f"perf: {b_share:.1%} → {v_share:.1%} of the samples (self), "
        f"{before_row:,.0f} → {after_row:,.0f} ns per iteration"
    )
    presence = (
        Presence.BASELINE_ONLY
        if not v_share
        else Presence.VARIANT_ONLY
        if not b_share
        else Presence.BOTH
    )
    return FunctionPart(
        name=str(row.get("name") or ""),
        obj=str(row.get("object") or ""),
        before=before_row,
        after=after_row,
        presence=presence,
        evidence=evidence,
        delta=after_row - before_row,
    )
