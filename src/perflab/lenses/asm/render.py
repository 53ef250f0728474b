"""The asm lens's section (hot functions' code size, vector width, calls and the normalised diff)
and the side-by-side annotated diff of `perflab show RUN --asm FUNCTION`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from perflab.lenses.asm.analyse import AsmView
from perflab.lenses.asm.code_diff import DiffRow, RowTag
from perflab.lenses.asm.disassembly import AsmLine
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.fragments import (
    SectionInput,
    details_json,
    evidence,
    pair_title,
    verdict_table,
)
from perflab.records.document import Block, Cell, Paragraph, Preformatted, Section, Style, Table
from perflab.tool_output.symbol_names import readable

MAX_DIFF_LINES = 400  # one asm diff; the full one is in `perflab show --asm`
DIFF_STYLES = {"-": Style.DEL, "+": Style.ADD, ">": Style.MOVED, "@": Style.GAP}


def diff_lines(text: str) -> tuple[Cell, ...]:
    """Classify the asm diff's lines by their marker ('-', '+', '>' moved, '@@' elided)."""
    lines = text.splitlines()
    shown = lines[:MAX_DIFF_LINES]
    out = [Cell(line, DIFF_STYLES.get(line[:1], Style.PLAIN)) for line in shown]
    if len(lines) > len(shown):
        out.append(Cell(f"… {len(lines) - len(shown)} more lines", Style.GAP))
    return tuple(out)


def _side(side: Any) -> str:
    if not isinstance(side, dict):
        return "absent"
    words = [f"{side.get('size_bytes', '?')} B", f"{side.get('instructions', '?')} insns"]
    if side.get("vector_width_bits"):
        words.append(f"{side['vector_width_bits']}-bit")
    loop = side.get("hot_loop")
    if isinstance(loop, dict) and loop.get("size_bytes") is not None:
        words.append(f"hot loop {loop['size_bytes']} B")
    if isinstance(side.get("cost_share"), int | float):
        words.append(f"{side['cost_share']:.1%} of cost")
    return ", ".join(words)


def section(view: SectionInput) -> Section:
    subsections = tuple(
        Section(pair_title(comparison), tuple(_pair_blocks(details_json(comparison))))
        for comparison in view.comparisons
    )
    table = verdict_table(view.comparisons, cross_run=view.cross_run)
    return Section("asm", (table,), subsections, key="asm")


def _pair_blocks(data: dict[str, Any]) -> list[Block]:
    """One pair's claims with their evidence, its notes, the hot functions and their diffs."""
    functions = data.get("functions") or []
    blocks: list[Block] = []
    if data.get("ratio_kind"):
        blocks.append(Paragraph(f"ratio: {data['ratio_kind']}", Style.MUTED))
    for diagnosis in data.get("diagnoses") or []:
        blocks.append(
            Paragraph(
                f"{diagnosis['claim']}: {readable(str(diagnosis['function']))}",
                Style.EMPHASIS,
            )
        )
        blocks += evidence(diagnosis.get("evidence") or [])
    for note in data.get("explanation_notes") or []:
        blocks.append(Paragraph(note, Style.MUTED))
    if functions:
        blocks.append(_functions_table(functions))
        blocks.append(Paragraph("side by side: perflab show RUN --asm FUNCTION", Style.MUTED))
    for f in functions:
        if f.get("diff"):
            blocks.append(
                Preformatted(
                    f"assembly diff: {readable(str(f.get('name', '')))}", diff_lines(f["diff"])
                )
            )
    return blocks


def _functions_table(functions: Sequence[dict[str, Any]]) -> Table:
    rows = tuple(
        (
            Cell(readable(str(f.get("name", "")))),
            Cell(_side(f.get("baseline"))),
            Cell(_side(f.get("variant"))),
            Cell(
                ", ".join(f.get("calls_added") or []),
                Style.UP if f.get("calls_added") else Style.PLAIN,
            ),
            Cell(
                ", ".join(f.get("calls_removed") or []),
                Style.DOWN if f.get("calls_removed") else Style.PLAIN,
            ),
            Cell(str(f.get("change") or "")),
        )
        for f in functions
    )
    return Table(
        ("function", "baseline", "variant", "calls added", "calls removed", "change"),
        rows,
        caption="hot functions",
    )


# --- perflab show RUN --asm FUNCTION ----------------------------------------------------------

_ROW_STYLE = {
    RowTag.SAME: Style.PLAIN,
    RowTag.CHANGED: Style.CHANGED,
    RowTag.REMOVED: Style.DEL,
    RowTag.ADDED: Style.ADD,
    RowTag.MOVED: Style.MOVED,
}
_MARK = {
    RowTag.SAME: " ",
    RowTag.CHANGED: "~",
    RowTag.REMOVED: "-",
    RowTag.ADDED: "+",
    RowTag.MOVED: ">",
}


def asm_view_section(view: AsmView, *, context: int | None = None) -> Section:
    """One function side by side: a summary table, then the aligned listings with costs;
    `context` elides unchanged runs longer than 2*context lines."""
    change = view.change
    return Section(
        f"{change.name}  {view.benchmark}: {view.baseline_variant} -> {view.variant}",
        (
            Paragraph(change.sentence, Style.EMPHASIS),
            _summary_table(view),
            _diff_table(view, change.rows, context),
        ),
        key="asm-view",
    )


def _summary_table(view: AsmView) -> Table:
    base, var = view.change.baseline, view.change.variant
    rows = [
        ("object", _object(base), _object(var)),
        ("size (bytes)", _num(base, lambda f: f.size_bytes), _num(var, lambda f: f.size_bytes)),
        ("instructions", _num(base, lambda f: len(f.lines)), _num(var, lambda f: len(f.lines))),
        (
            "vector width",
            _num(base, lambda f: f.vector_width_bits),
            _num(var, lambda f: f.vector_width_bits),
        ),
        ("hot loop", _loop(base), _loop(var)),
        ("predicted cycles/iter", _cycles(base), _cycles(var)),
        (f"{view.cost_unit} share", f"{view.baseline_share:.1%}", f"{view.variant_share:.1%}"),
    ]
    return Table(
        ("", view.baseline_variant, view.variant),
        tuple(tuple(Cell(text) for text in row) for row in rows),
        numeric=(False, True, True),
    )


def _diff_table(view: AsmView, rows: Sequence[DiffRow], context: int | None) -> Table:
    out: list[tuple[Cell, ...]] = []
    previous = -1
    for index in _visible(rows, context):
        if index != previous + 1:
            out.append(
                (Cell(""), Cell("...", Style.GAP), Cell(""), Cell("...", Style.GAP), Cell(""))
            )
        previous = index
        row = rows[index]
        style = _ROW_STYLE[row.tag]
        out.append(
            (
                Cell(_cost(row.left)),
                _code(row.left, style),
                Cell(_MARK[row.tag], style),
                _code(row.right, style),
                Cell(_cost(row.right)),
            )
        )
    return Table(
        (view.cost_unit, view.baseline_variant, "", view.variant, view.cost_unit),
        tuple(out),
        numeric=(True, False, False, False, True),
        caption="│ marks the hot loop",
    )


def _visible(rows: Sequence[DiffRow], context: int | None) -> list[int]:
    if context is None:
        return list(range(len(rows)))
    changed = [k for k, row in enumerate(rows) if row.tag is not RowTag.SAME]
    keep = {k for c in changed for k in range(c - context, c + context + 1) if 0 <= k < len(rows)}
    return sorted(keep)


def _code(line: AsmLine | None, style: Style) -> Cell:
    if line is None:
        return Cell("")
    label = f"{line.label}:" if line.label else ""
    text = f"{label:<6}{line.text}"
    if line.in_hot_loop:
        return Cell("│" + text, style if style is not Style.PLAIN else Style.HOT)
    return Cell(" " + text, style)


def _cost(line: AsmLine | None) -> str:
    return f"{line.cost:g}" if line is not None and line.cost else ""


def _object(listing: FunctionListing | None) -> str:
    return listing.object_path.rsplit("/", 1)[-1] if listing is not None else "-"


def _num(listing: FunctionListing | None, value: Callable[[FunctionListing], int]) -> str:
    return str(value(listing)) if listing is not None else "-"


def _loop(listing: FunctionListing | None) -> str:
    if listing is None or listing.hot_loop is None:
        return "-"
    loop = listing.hot_loop
    share = f", {loop.cost_share:.0%} of cost" if loop.cost_share is not None else ""
    return f"{loop.size_bytes} B / {loop.instructions} insns{share}"


def _cycles(listing: FunctionListing | None) -> str:
    if listing is None or listing.hot_loop is None or listing.hot_loop.throughput is None:
        return "-"
    return f"{listing.hot_loop.throughput.cycles_per_iteration:.2f}"
