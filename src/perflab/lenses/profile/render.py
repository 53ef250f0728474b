"""The profile lens's section: hot symbols' shares of the samples and a differential flame graph
per variant."""

from __future__ import annotations

from typing import Any

from perflab.lenses.fragments import (
    SectionInput,
    capped,
    details_json,
    evidence,
    listed,
    pair_title,
    share,
    signed,
    verdict_table,
)
from perflab.records.diagnosis import Claim
from perflab.records.document import (
    Block,
    Cell,
    FlameFigure,
    FlameNode,
    Paragraph,
    Section,
    Style,
    Table,
)
from perflab.records.model import Comparison
from perflab.tool_output.symbol_names import readable

FLAME_EXPLANATION = (
    "Differential flame graph: each frame's width is its share of the variant's samples (callers "
    "below, callees above); red frames take a larger share than in the baseline, blue a smaller "
    "one. Hover a frame for its numbers."
)


def _points(value: float) -> str:
    return f"{value * 100:.1f} pt"


def section(view: SectionInput) -> Section:
    subsections = tuple(
        Section(pair_title(comparison), tuple(_pair_blocks(comparison)))
        for comparison in view.comparisons
    )
    table = verdict_table(view.comparisons, cross_run=view.cross_run)
    return Section("profile", (table,), subsections, key="profile")


def _pair_blocks(comparison: Comparison) -> list[Block]:
    data = details_json(comparison)
    blocks: list[Block] = _facts(data)
    blocks += claim_blocks(comparison.variant, data)
    blocks += _symbols_table(data.get("symbols") or [])
    flame = getattr(comparison.details, "flame", None)  # ProfileDetails has it
    if isinstance(flame, FlameNode):
        blocks.append(FlameFigure("differential flame graph", flame, explanation=FLAME_EXPLANATION))
    return blocks


def _facts(data: dict[str, Any]) -> list[Block]:
    """How the profiles were recorded: the event, the call graph, the samples."""
    facts = []
    if data.get("sampled_event"):
        facts.append(f"sampled {data['sampled_event']}")
    if data.get("call_graph"):
        facts.append(f"call graph {data['call_graph']}")
    if data.get("baseline_samples") is not None and data.get("variant_samples") is not None:
        facts.append(f"{data['baseline_samples']} vs {data['variant_samples']} samples")
    return [Paragraph(", ".join(facts), Style.MUTED)] if facts else []


def claim_blocks(variant: str, data: dict[str, Any]) -> list[Block]:
    """What appeared, disappeared or changed dispatch, and the evidence for it."""
    blocks: list[Block] = []
    for key in ("appeared", "disappeared"):
        if data.get(key):
            blocks.append(Paragraph(f"{key} in {variant}: {listed(data[key])}", Style.EMPHASIS))
    for change in data.get("dispatch_changed") or []:
        # a pair is a dispatch only where the analysis found a resolver returning each side;
        # otherwise (two builds, no shared resolver) it says what it is: the caller's callee
        said = (
            "callee changed" if change.get("claim") == Claim.CALLEE_CHANGED else "dispatch changed"
        )
        blocks.append(
            Paragraph(
                f"{said} in {variant}: {readable(str(change.get('from')))} → "
                f"{readable(str(change.get('to')))} "
                f"(called from {readable(str(change.get('caller')))})",
                Style.EMPHASIS,
            )
        )
    for diagnosis in (data.get("diagnoses") or [])[:8]:
        blocks += evidence(diagnosis.get("evidence") or [])
    return blocks


def _symbols_table(symbols: list[dict[str, Any]]) -> list[Block]:
    rows = [
        (
            Cell(readable(str(s.get("name", "")))),
            Cell(str(s.get("object") or "")),
            Cell(share(s.get("baseline_share"))),
            Cell(share(s.get("variant_share"))),
            signed(s.get("delta"), _points),
            Cell(share(s.get("variant_children_share"))),
        )
        for s in symbols
    ]
    shown, omitted = capped(rows)
    if not shown:
        return []
    return [
        Table(
            ("symbol", "object", "baseline self", "variant self", "Δ", "variant incl."),
            shown,
            numeric=(False, False, True, True, True, True),
            caption="hot symbols (shares of samples)",
            omitted_rows=omitted,
        )
    ]
