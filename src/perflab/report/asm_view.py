"""Terminal rendering of `perflab show RUN --asm FUNCTION`: a side-by-side annotated diff.

Input is :class:`perflab.lenses.asm.measure.AsmView` (built from the store by `asm_views`); this
module only formats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from perflab.lenses.asm.analyse import AsmLine, DiffRow, FunctionListing, RowTag
from perflab.lenses.asm.measure import AsmView

_STYLE = {
    RowTag.SAME: "",
    RowTag.CHANGED: "yellow",
    RowTag.REMOVED: "red",
    RowTag.ADDED: "green",
    RowTag.MOVED: "cyan",
}
_MARK = {
    RowTag.SAME: " ",
    RowTag.CHANGED: "~",
    RowTag.REMOVED: "-",
    RowTag.ADDED: "+",
    RowTag.MOVED: ">",
}


def render_asm_views(
    views: Sequence[AsmView], console: Console, *, context: int | None = None
) -> None:
    """Print each view; `context` elides unchanged runs longer than 2*context lines."""
    for view in views:
        console.print(asm_view_renderable(view, context=context))


def asm_view_renderable(view: AsmView, *, context: int | None = None) -> RenderableType:
    change = view.change
    title = Text.assemble(
        (change.name, "bold"),
        f"  {view.benchmark}: {view.baseline_variant} -> {view.variant}\n",
        (change.sentence, "italic"),
    )
    return Group(title, _summary_table(view), _diff_table(view, change.rows, context))


def _summary_table(view: AsmView) -> Table:
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("")
    table.add_column(view.baseline_variant, justify="right")
    table.add_column(view.variant, justify="right")
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
    for row in rows:
        table.add_row(*row)
    return table


def _diff_table(view: AsmView, rows: Sequence[DiffRow], context: int | None) -> Table:
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, expand=True)
    table.add_column(view.cost_unit, justify="right", style="magenta")
    table.add_column(view.baseline_variant, ratio=1, overflow="fold")
    table.add_column("", width=1)
    table.add_column(view.variant, ratio=1, overflow="fold")
    table.add_column(view.cost_unit, justify="right", style="magenta")
    shown = _visible(rows, context)
    previous = -1
    for index in shown:
        if index != previous + 1:
            table.add_row("", Text("...", "dim"), "", Text("...", "dim"), "")
        previous = index
        row = rows[index]
        style = _STYLE[row.tag]
        table.add_row(
            _cost(row.left),
            _code(row.left, style),
            Text(_MARK[row.tag], style),
            _code(row.right, style),
            _cost(row.right),
        )
    return table


def _visible(rows: Sequence[DiffRow], context: int | None) -> list[int]:
    if context is None:
        return list(range(len(rows)))
    changed = [k for k, row in enumerate(rows) if row.tag is not RowTag.SAME]
    keep = {k for c in changed for k in range(c - context, c + context + 1) if 0 <= k < len(rows)}
    return sorted(keep)


def _code(line: AsmLine | None, style: str) -> Text:
    if line is None:
        return Text("")
    label = f"{line.label}:" if line.label else ""
    text = Text(f"{label:<6}{line.text}", style)
    if line.in_hot_loop:
        text.stylize("bold")
        text = Text.assemble(("│", "bold blue"), text)
    else:
        text = Text.assemble(" ", text)
    return text


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
