"""The rss lens's section: peak memory per variant (more memory is 'higher', not 'slower') and
the allocated blocks an iteration leaves behind."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput, details_json, signed, verdict_table
from perflab.records.document import Block, Cell, Section, Table

MEASURES = {
    "maxrss_kb": "peak RSS of the process",
    "peak_alloc_bytes": "peak allocated while the loop ran",
}


def _blocks(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, int | float) else "-"


def section(view: SectionInput) -> Section:
    """The rss lens's report section: its verdict table and the net allocated blocks per
    iteration."""
    blocks: list[Block] = [
        verdict_table(
            view.comparisons,
            cross_run=view.cross_run,
            event_text=lambda c: MEASURES.get(c.event or "", c.event or ""),
            amount=lambda c: True,  # memory: more is higher, not slower
        )
    ]
    rows = []
    for comparison in view.comparisons:
        net = details_json(comparison).get("net_blocks_per_iteration")
        if not isinstance(net, dict):
            continue
        base, var = net.get("baseline"), net.get("variant")
        delta = (
            var - base if isinstance(base, int | float) and isinstance(var, int | float) else None
        )
        rows.append(
            (
                Cell(comparison.benchmark),
                Cell(f"{comparison.variant} vs {comparison.baseline}"),
                Cell(_blocks(base)),
                Cell(_blocks(var)),
                signed(delta, _blocks),
            )
        )
    if rows:
        # one row per benchmark and variant, however many measures
        unique = tuple(dict.fromkeys(rows))
        blocks.append(
            Table(
                ("benchmark", "variant", "baseline", "variant", "Δ"),
                unique,
                numeric=(False, False, True, True, True),
                caption="allocated blocks left per iteration (net, tracemalloc)",
            )
        )
    return Section("rss", tuple(blocks), key="rss")
