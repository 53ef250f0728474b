"""The asm lens's hook for `same_work.py`: did the two variants run the same code, by their hot
functions' bytes."""

from __future__ import annotations

from perflab.lenses.asm.analyse import AsmDetails
from perflab.lenses.asm.metric import ASM
from perflab.records.code_findings import Finding, Seen
from perflab.records.model import Comparison


def same_code(comparison: Comparison) -> Finding | None:
    if isinstance(comparison.details, AsmDetails):
        return asm_finding(comparison.details)
    return None


def asm_finding(details: AsmDetails) -> Finding:
    """Same code: every hot function ran in both variants as the same symbol of a
    byte-identical object (build-id or SHA-256); different when one ran on one side only or
    its code changed; cannot tell when nothing ran hot enough, or the objects are not known to
    be identical."""
    hot = [row for row in details.rows if row.baseline.ran or row.variant.ran]
    if not hot:
        return Finding(ASM, Seen.CANNOT_TELL)
    for row in hot:
        if not (row.baseline.ran and row.variant.ran) or not row.change.identical:
            return Finding(ASM, Seen.DIFFERENT)
    if any(row.name not in details.byte_identical for row in hot):
        return Finding(ASM, Seen.CANNOT_TELL)
    return Finding(
        ASM,
        Seen.SAME,
        f"the same {len(hot)} hot function{'s' if len(hot) != 1 else ''} with byte-identical code",
    )
