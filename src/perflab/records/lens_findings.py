"""What a lens found beyond its comparisons, and how it reaches the JSON document. `LensFindings`:
each lens its own typed record, which its renderer reads by attribute; `top_level_json`: the one
rule that turns every lens's findings into the JSON document's lens-specific top-level fields, the
JSON contract's extension point, where a lens adds fields and never renames one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class LensFindings(Protocol):
    """One lens's findings of one benchmark beyond its comparisons (the counters lens's derived
    metrics and AVX-512 use, the profile lens's recording summaries ...)."""

    def to_json(self) -> dict[str, Any]:
        """The document's top-level fields these findings give: each a list of rows, every row
        naming its benchmark (several benchmarks' rows share one field)."""
        ...


def joined_rows(row_lists: Iterable[Sequence[T]]) -> list[T]:
    """Several findings' rows of one kind, in order, less the rows an earlier findings gave (a
    baseline analysed with each of its pairs gives its rows once per pair): what the JSON
    document lists and a lens's section shows."""
    joined: list[T] = []
    for rows in row_lists:
        joined += [row for row in rows if row not in joined]
    return joined


def top_level_json(findings: Iterable[LensFindings]) -> dict[str, Any]:
    """Every lens's findings as the document's top-level fields, in the order given: a list
    field that several findings give holds their rows joined (`joined_rows`); any other field
    keeps its first value."""
    fields: dict[str, Any] = {}
    for found in findings:
        for key, value in found.to_json().items():
            kept = fields.get(key)
            if isinstance(value, list) and isinstance(kept, list):
                fields[key] = joined_rows((kept, value))
            else:
                fields.setdefault(key, value)
    return fields
