"""The memory lens's report section. It holds the verdict table (more memory work is 'higher', not
'slower'), whether the variants do the same memory work, and one table per benchmark with every
variant's memory work per iteration, each row labelled with what it counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perflab.lenses.fragments import SectionInput, count, details_json, verdict_table
from perflab.records.document import Block, Cell, Paragraph, Section, Style, Table
from perflab.records.units import format_value

# row labels, in table order: (JSON name, label, unit for formatting; "" = a plain count)
ROWS: tuple[tuple[str, str, str], ...] = (
    ("data_reads", "data reads (accesses)", ""),
    ("data_writes", "data writes (accesses)", ""),
    ("d1_misses", "D1 misses (read + write)", ""),
    ("d1_fill_bytes", "bytes brought into D1 (D1 misses × {D1} B)", "B"),
    ("ll_misses", "LL data misses (read + write)", ""),
    ("ll_fill_bytes", "bytes brought into LL from memory (LL misses × {LL} B)", "B"),
    ("allocations", "C allocator calls (malloc, calloc ...)", ""),
    ("maxrss_kb", "peak RSS of the process (not per iteration)", "kB"),
    ("peak_alloc_bytes", "peak allocated while the loop ran (not per iteration)", "B"),
)
EVENT_LABELS = {
    "d1_fill_bytes": "bytes into D1 per iteration",
    "ll_fill_bytes": "bytes into LL from memory per iteration",
    "data_reads": "data reads per iteration",
    "data_writes": "data writes per iteration",
    "allocations": "C allocator calls per iteration",
    "maxrss_kb": "peak RSS",
    "peak_alloc_bytes": "peak allocated",
}


def _value(value: object, unit: str) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return format_value(value, unit) if unit else count(value)


def _label(template: str, lines: Mapping[str, Any]) -> str:
    return template.format(D1=lines.get("D1", "?"), LL=lines.get("LL", "?"))


def _per_variant_table(
    benchmark: str, profiles: Mapping[str, Mapping[str, Any]], lines: Any
) -> Table:
    names = tuple(profiles)
    rows = tuple(
        (
            Cell(_label(label, lines if isinstance(lines, dict) else {})),
            *(Cell(_value(profiles[name].get(key), unit)) for name in names),
        )
        for key, label, unit in ROWS
    )
    return Table(
        ("per iteration", *names),
        rows,
        numeric=(False, *(True for _ in names)),
        caption=f"{benchmark}: memory work per iteration (valgrind cache simulation; "
        "'-': not measured)",
    )


def section(view: SectionInput) -> Section:
    """The memory lens's report section: its verdict table, whether the variants do the same memory
    work, and a table per benchmark."""
    blocks: list[Block] = [
        verdict_table(
            view.comparisons,
            cross_run=view.cross_run,
            event_text=lambda c: EVENT_LABELS.get(c.event or "", c.event or ""),
            amount=lambda c: True,  # more memory work is higher, not slower
        )
    ]
    sentences: dict[str, None] = {}
    profiles: dict[str, dict[str, Mapping[str, Any]]] = {}
    lines: dict[str, Any] = {}
    for comparison in view.comparisons:
        data = details_json(comparison)
        work = data.get("different_memory_work")
        if isinstance(work, dict) and work.get("message"):
            sentences[str(work["message"])] = None
        for side, reason in (data.get("traffic_unavailable") or {}).items():
            name = comparison.baseline if side == "baseline" else comparison.variant
            sentences[f"valgrind cannot execute `{name}`'s code: no traffic ({reason})"] = None
        memory = data.get("memory") or {}
        mine = profiles.setdefault(comparison.benchmark, {})
        for side, name in (("baseline", comparison.baseline), ("variant", comparison.variant)):
            if isinstance(memory.get(side), dict):
                mine.setdefault(name, memory[side])
        if data.get("line_bytes"):
            lines.setdefault(comparison.benchmark, data["line_bytes"])
    blocks += [Paragraph(sentence, Style.EMPHASIS) for sentence in sentences]
    for benchmark, by_variant in profiles.items():
        blocks.append(_per_variant_table(benchmark, by_variant, lines.get(benchmark)))
    return Section("memory", tuple(blocks), key="memory")
