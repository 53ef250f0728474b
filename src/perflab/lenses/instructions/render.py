"""The instructions lens's section: instruction counts (and cache-simulation misses) per
iteration, the functions whose counts changed, inlining changes and --layer totals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perflab.lenses.fragments import (
    SectionInput,
    capped,
    count,
    details_json,
    evidence,
    pair_title,
    signed,
    verdict_table,
)
from perflab.records.document import Block, Cell, Paragraph, Section, Style, Table
from perflab.records.model import Comparison
from perflab.tool_output.symbol_names import readable

# what a derived callgrind event counts, as a row label says it
EVENT_LABELS = {
    "D1_misses": "D1 misses",
    "LL_misses": "LL misses",
    "branch_mispredicts": "branch mispredicts",
}
NEGATIVE_FOOTNOTE = (
    "Negative per-iteration counts: statement counts are the measured loop minus an empty loop "
    "of the same length (which subtracts the loop and the worker's handshake). A function the "
    "empty loop runs more often than the measured one (interpreter bookkeeping such as frame "
    "pushes) comes out below zero; read it as 'less than in the empty loop', not as a real count."
)


def what(comparison: Comparison) -> str:
    if comparison.event is None:
        return "instructions"
    return EVENT_LABELS.get(comparison.event, comparison.event.replace("_", " "))


def _value(comparison: Comparison, value: float) -> str:
    return count(value)


def _cpu_ran(function: Mapping[str, Any]) -> str:
    """'the CPU ran Y in the baseline' for a row whose function the CPU did not run in every
    variant though valgrind did (another dispatch target: `cpu_ran`), else ''."""
    cpu_ran = function.get("cpu_ran") or {}
    name = function.get("name")
    other = [
        f"{cpu_ran[side]} in the {side}"
        for side in ("baseline", "variant")
        if cpu_ran.get(side) and cpu_ran[side] != name
    ]
    return f"the CPU ran {' and '.join(other)}" if other else ""


def _presence(function: Mapping[str, Any]) -> str:
    presence = str(function.get("presence", "")).replace("_", " ")
    other = _cpu_ran(function)
    return f"{presence}; {other}" if other else presence


def _functions_table(comparison: Comparison, data: Mapping[str, Any]) -> Table | None:
    functions = sorted(
        (f for f in data.get("functions") or [] if f.get("delta") or f.get("cpu_ran")),
        key=lambda f: -abs(f.get("delta") or 0.0),
    )
    rows = [
        (
            Cell(readable(str(f.get("name", "")))),
            Cell(
                str(f.get("object") or "")
                + (f" → {f['variant_object']}" if f.get("variant_object") else "")
            ),
            Cell(count(f.get("baseline"))),
            Cell(count(f.get("variant"))),
            signed(f.get("delta")),
            Cell(count(f.get("variant_inclusive"))),
            Cell(_presence(f)),
        )
        for f in functions
    ]
    shown, omitted = capped(rows)
    if not shown:
        return None
    label = what(comparison)
    return Table(
        ("function", "object", "baseline self", "variant self", "Δ self", "variant incl.", "in"),
        shown,
        numeric=(False, False, True, True, True, True, False),
        caption=f"functions whose {label} per iteration changed most",
        omitted_rows=omitted,
    )


def _has_negative(data: Mapping[str, Any]) -> bool:
    return any(
        isinstance(f.get(key), int | float) and f[key] < 0
        for f in data.get("functions") or []
        for key in ("baseline", "variant")
    )


def _layers_table(data: Mapping[str, Any]) -> Table | None:
    layers = data.get("layers") or []
    if not layers:
        return None
    rows = tuple(
        (
            Cell(str(layer.get("layer", ""))),
            Cell(count(layer.get("baseline"))),
            Cell(count(layer.get("variant"))),
            signed(layer.get("delta")),
        )
        for layer in layers
    )
    return Table(
        ("layer", "baseline", "variant", "Δ"),
        rows,
        numeric=(False, True, True, True),
        caption="instructions per iteration by layer (--layer)",
    )


def section(view: SectionInput) -> Section:
    """The instructions lens's report section: its verdict table, then per comparison the inlining
    changes, evidence and function costs."""
    subsections = []
    for comparison in view.comparisons:
        data = details_json(comparison)
        blocks: list[Block] = []
        if data.get("attribution") and comparison.event is None:
            blocks.append(Paragraph(f"attribution: {data['attribution']}", Style.MUTED))
        for change in data.get("inlining_changes") or []:
            sentence = (
                change.get("sentence") or f"{change.get('function')} is now {change.get('change')}"
            )
            blocks.append(Paragraph(f"inlining: {sentence}", Style.EMPHASIS))
            blocks += evidence(change.get("evidence") or [])
        layers = _layers_table(data)
        if layers is not None:
            blocks.append(layers)
        for function in data.get("functions") or []:
            if _cpu_ran(function):
                text = (
                    f"valgrind ran {function.get('name')}; {_cpu_ran(function)} "
                    "(valgrind hides AVX-512 from the code it runs)"
                )
                blocks.append(Paragraph(text, Style.EMPHASIS))
        functions = _functions_table(comparison, data)
        if functions is not None:
            blocks.append(functions)
        if _has_negative(data):
            blocks.append(Paragraph("* " + NEGATIVE_FOOTNOTE, Style.MUTED))
        title = pair_title(comparison) + (f" ({what(comparison)})" if comparison.event else "")
        if blocks:
            subsections.append(Section(title, tuple(blocks)))
    table = verdict_table(
        view.comparisons,
        cross_run=view.cross_run,
        value_text=_value,
        # the row says what it counts: "D1 misses per iteration", not "D1_misses" and "misses"
        event_text=lambda c: f"{what(c)} per iteration",
        amount=lambda c: c.event is not None,
    )
    return Section("instructions", (table,), tuple(subsections), key="instructions")
