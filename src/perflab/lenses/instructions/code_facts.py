"""What the instructions lens found the same in a pair's code: objects byte-identical in both
variants (its details' `identical_objects`), for the explanation's "Unchanged"."""

from __future__ import annotations

from typing import Any

from perflab.records.accounting import CodeFacts
from perflab.records.model import Comparison


def code_facts(comparison: Comparison) -> CodeFacts:
    data: dict[str, Any] = comparison.details.to_json() if comparison.details is not None else {}
    identical = data.get("identical_objects") or []
    if not identical:
        return CodeFacts()
    shown = ", ".join(identical[:4]) + (" ..." if len(identical) > 4 else "")
    return CodeFacts(
        unchanged=(f"{len(identical)} objects byte-identical in both variants ({shown})",)
    )
