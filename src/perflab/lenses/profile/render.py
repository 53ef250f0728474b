"""The profile lens's section: hot symbols' shares of the samples and a differential flame graph
per variant."""

from __future__ import annotations

from typing import Any

from perflab.document import Block, Cell, FlameFigure, FlameNode, Paragraph, Section, Style, Table
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

FLAME_EXPLANATION = (
    "Differential flame graph: each frame's width is its share of the variant's samples (callers "
    "below, callees above); red frames take a larger share than in the baseline, blue a smaller "
    "one. Hover a frame for its numbers."
)


def _points(value: Any) -> str:
    return f"{value * 100:.1f} pt"


def section(view: SectionInput) -> Section:
    subsections = []
    for comparison in view.comparisons:
        data = details_json(comparison)
        blocks: list[Block] = []
        facts = []
        if data.get("sampled_event"):
            facts.append(f"sampled {data['sampled_event']}")
        if data.get("call_graph"):
            facts.append(f"call graph {data['call_graph']}")
        if data.get("baseline_samples") is not None and data.get("variant_samples") is not None:
            facts.append(f"{data['baseline_samples']} vs {data['variant_samples']} samples")
        if facts:
            blocks.append(Paragraph(", ".join(facts), Style.MUTED))
        for key in ("appeared", "disappeared"):
            if data.get(key):
                blocks.append(
                    Paragraph(f"{key} in {comparison.variant}: {listed(data[key])}", Style.EMPHASIS)
                )
        for change in data.get("dispatch_changed") or []:
            blocks.append(
                Paragraph(
                    f"dispatch changed in {comparison.variant}: {change.get('from')} → "
                    f"{change.get('to')} (called from {change.get('caller')})",
                    Style.EMPHASIS,
                )
            )
        for diagnosis in (data.get("diagnoses") or [])[:8]:
            blocks += evidence(diagnosis.get("evidence") or [])
        rows = [
            (
                Cell(str(s.get("name", ""))),
                Cell(str(s.get("object") or "")),
                Cell(share(s.get("baseline_share"))),
                Cell(share(s.get("variant_share"))),
                signed(s.get("delta"), _points),
                Cell(share(s.get("variant_children_share"))),
            )
            for s in data.get("symbols") or []
        ]
        shown, omitted = capped(rows)
        if shown:
            blocks.append(
                Table(
                    ("symbol", "object", "baseline self", "variant self", "Δ", "variant incl."),
                    shown,
                    numeric=(False, False, True, True, True, True),
                    caption="hot symbols (shares of samples)",
                    omitted_rows=omitted,
                )
            )
        flame = getattr(comparison.details, "flame", None)  # ProfileDetails has it
        if isinstance(flame, FlameNode):
            blocks.append(
                FlameFigure("differential flame graph", flame, explanation=FLAME_EXPLANATION)
            )
        subsections.append(Section(pair_title(comparison), tuple(blocks)))
    table = verdict_table(view.comparisons, cross_run=view.cross_run)
    return Section("profile", (table,), tuple(subsections), key="profile")
