"""The instructions lens's part in a pair's explanation: the difference in instructions per
iteration and each function's self instructions (callgrind), from its comparison's details; and
every function callgrind ran, which a dispatch change the CPU made is checked against."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from perflab.lenses.instructions import RESIDUE
from perflab.lenses.instructions.details import InstructionsDetails
from perflab.records.accounting import (
    Accounting,
    FunctionCount,
    FunctionPart,
    Presence,
    ToolRows,
)
from perflab.records.model import Comparison

SAME_COUNT = 1e-3  # counts this close are the same code's (same_code.py)
UNIT = "instructions"


def accounting(comparison: Comparison) -> Accounting:
    """The difference and the functions it is made of; settled where the counts agree within
    the spread between processes or `SAME_COUNT`."""
    data: dict[str, Any] = comparison.details.to_json() if comparison.details is not None else {}
    before = float(data.get("baseline_per_iteration") or comparison.baseline_value)
    after = float(data.get("variant_per_iteration") or comparison.variant_value)
    difference = after - before
    found = Accounting(
        source=UNIT,
        unit=UNIT,
        amount="self instructions",
        tool="callgrind",
        before=before,
        after=after,
        what="",
    )
    found = replace(found, counts_work=True)
    if _no_difference(comparison, before, after):
        what = (
            f"The same instructions per iteration ({before:,.0f} and {after:,.0f}, within the "
            "spread between processes or 0.1%): nothing to account for"
        )
        return replace(found, what=what, settled=True)
    percent = abs(difference) / before if before else math.nan
    what = (
        f"{percent:.1%} {'fewer' if difference < 0 else 'more'} instructions per iteration "
        f"({before:,.0f} → {after:,.0f})"
    )
    parts = tuple(_part(row) for row in data.get("functions") or [])
    return replace(found, what=what, parts=tuple(p for p in parts if abs(p.delta) >= RESIDUE))


def _part(row: dict[str, Any]) -> FunctionPart:
    obj = str(row.get("object") or "")
    if row.get("variant_object"):
        obj = f"{obj} → {row['variant_object']}"
    presence = Presence.read(row.get("presence"))
    where = {
        Presence.BASELINE_ONLY: " (ran in the baseline only)",
        Presence.VARIANT_ONLY: " (ran in the variant only)",
    }.get(presence, "")
    before, after = float(row.get("baseline") or 0), float(row.get("variant") or 0)
    evidence = f"callgrind: {before:,.1f} → {after:,.1f} self instructions per iteration{where}"
    delta = float(row.get("delta") or 0.0)
    return FunctionPart(
        name=str(row.get("name") or ""),
        obj=obj,
        before=before,
        after=after,
        presence=presence,
        evidence=evidence,
        delta=delta,
    )


def _no_difference(comparison: Comparison, before: float, after: float) -> bool:
    if before <= 0:
        return after == before
    if abs(after - before) <= SAME_COUNT * before:
        return True
    low, high = comparison.ci_low, comparison.ci_high
    return math.isfinite(low) and math.isfinite(high) and low <= 1.0 <= high


def tool_rows(comparison: Comparison) -> ToolRows:
    """Every function row valgrind ran: the details' own rows where it has them (a run read
    back from the store), else the JSON's (its largest changes)."""
    details = comparison.details
    if isinstance(details, InstructionsDetails):
        rows = tuple(
            FunctionCount(r.name, r.baseline_self, r.variant_self, r.presence)
            for r in details.functions
        )
        return ToolRows("valgrind", UNIT, rows)
    data: dict[str, Any] = details.to_json() if details is not None else {}
    return ToolRows(
        "valgrind",
        UNIT,
        tuple(
            FunctionCount(
                str(r.get("name")),
                float(r.get("baseline") or 0.0),
                float(r.get("variant") or 0.0),
                Presence.read(r.get("presence")),
            )
            for r in data.get("functions") or []
        ),
    )
