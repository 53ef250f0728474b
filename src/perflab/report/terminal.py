"""The terminal report (rich): each lens's section (its verdict table first, then what it found
beyond the ratio), then what differs and what to distrust. Sections come from analysis; this
module only lays them out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console, Group
from rich.table import Table as RichTable
from rich.text import Text

from perflab.records.document import (
    FIGURE_TYPES,
    Block,
    Cell,
    Paragraph,
    Preformatted,
    Section,
    Style,
    Table,
)
from perflab.records.model import Severity
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo
from perflab.report.design_views import design_sections
from perflab.report.escape import terminal, visible
from perflab.report.notes import NoteGroup, group_notes
from perflab.store import RunSummary

MAX_ROWS = 12  # details tables; the HTML report and the JSON have the rest
# a preformatted block (a diff) is cut here, the rest counted, so it fits a screen; the HTML report
# has the whole
MAX_PREFORMATTED_LINES = 40
# quiet by default: an assembly diff shows its changed lines with this much context, at most
# QUIET_DIFF_LINES lines (the whole listing: --verbose, the HTML report)
DIFF_CONTEXT = 1
QUIET_DIFF_LINES = 16
# a table cell longer than this that reads as a C++ name loses its template and argument lists
SYMBOL_CHARS = 60
_CHANGED = {Style.ADD, Style.DEL, Style.MOVED, Style.CHANGED}

STYLES = {
    Style.PLAIN: "",
    Style.UP: "red",
    Style.DOWN: "green",
    Style.ADD: "green",
    Style.DEL: "red",
    Style.MOVED: "cyan",
    Style.CHANGED: "yellow",
    Style.GAP: "dim",
    Style.HOT: "bold",
    Style.MUTED: "dim",
    Style.EMPHASIS: "bold magenta",
    Style.FASTER: "bold green",
    Style.SLOWER: "bold red",
    Style.EQUIVALENT: "cyan",
    Style.INCONCLUSIVE: "yellow",
    Style.INVALID: "bold magenta",
}


def text_of(cell: Cell | Paragraph) -> Text:
    # cells carry names (benchmarks, variants, symbols): control characters shown, no markup
    return terminal(cell.text, STYLES[cell.style])


def short_symbol(text: str, limit: int = SYMBOL_CHARS) -> str:
    """A long C++ name as the terminal shows it: the nested template arguments and the
    parameter list elided (`at::native::cpu_kernel_vec<…>(…)`); the HTML and JSON keep it."""
    if len(text) <= limit or "::" not in text:
        return text
    out: list[str] = []
    depth = 0
    for char in text:
        if char in "<(":
            if depth == 0:
                out.append(char + "…")
            depth += 1
        elif char in ">)" and depth:
            depth -= 1
            if depth == 0:
                out.append(char)
        elif depth == 0:
            out.append(char)
    return "".join(out)


def quiet_diff(lines: Sequence[Cell], context: int = DIFF_CONTEXT) -> list[Cell]:
    """An assembly diff's changed lines with `context` lines around each, the rest elided:
    the part of the hot loop that changed, not the whole listing."""
    keep = {
        k + d
        for k, line in enumerate(lines)
        if line.style in _CHANGED
        for d in range(-context, context + 1)
    }
    out: list[Cell] = []
    for k, line in enumerate(lines):
        if k in keep:
            out.append(line)
        elif not out or out[-1].text != "…":
            out.append(Cell("…", Style.GAP))
    return out


def table_renderable(
    table: Table, title: str = "", *, max_rows: int | None = MAX_ROWS, verbose: bool = True
) -> RichTable:
    """A document table as a Rich table, at most `max_rows` rows."""
    heading = title or table.title
    out = RichTable(
        title=terminal(heading) if heading else None, title_justify="left", title_style="bold"
    )
    last = len(table.columns) - 1
    for index, column in enumerate(table.columns):
        out.add_column(
            terminal(column),
            justify="right" if table.is_numeric(index) else "left",
            # the ratio and the verdict must stay readable on one line
            no_wrap=column in ("ratio [95% CI]", "verdict")
            or index == last
            and column == "verdict",
            overflow="fold",
        )
    rows = table.rows if max_rows is None else table.rows[:max_rows]
    for row in rows:
        if verbose:
            out.add_row(*(text_of(cell) for cell in row))
        else:
            out.add_row(*(text_of(Cell(short_symbol(c.text), c.style)) for c in row))
    more = table.omitted_rows + len(table.rows) - len(rows)
    captions = [table.caption] if table.caption else []
    if more:
        captions.append(f"{more} more in the HTML report and the JSON output")
    if captions:
        out.caption = terminal("; ".join(captions))
    return out


def _block(
    block: Block, console: Console, figures: list[str], max_rows: int | None, verbose: bool
) -> None:
    if isinstance(block, Table):
        console.print(table_renderable(block, max_rows=max_rows, verbose=verbose))
    elif isinstance(block, Paragraph):
        console.print(text_of(block))
    elif isinstance(block, Preformatted):
        console.print(terminal(block.title, "bold"))
        if verbose:
            lines = list(block.lines)
        else:
            lines = quiet_diff(block.lines)[:QUIET_DIFF_LINES]
        for line in lines:
            console.print(text_of(line), soft_wrap=True)
        if len(lines) < len(block.lines):
            console.print(
                Text(f"(changed lines; all {len(block.lines)}: --verbose, --html)", style="dim")
            )
    elif isinstance(block, FIGURE_TYPES):
        figures.append(block.title)


def render_section(
    section: Section,
    console: Console,
    *,
    top: bool = True,
    max_rows: int | None = MAX_ROWS,
    verbose: bool = True,
    html_path: str | None = None,
) -> None:
    """A section: its title (on its first table, when it starts with one), its blocks, then its
    subsections. Details tables show `max_rows` rows (None: all). Not `verbose`: assembly
    diffs show their changed lines, long C++ names are shortened. `html_path`: the HTML
    report this run was written to, where the plots are (None: say how to get one)."""
    figures: list[str] = []
    if top and not (section.blocks and isinstance(section.blocks[0], Table)):
        console.print(terminal(section.title, "bold"))
    for index, block in enumerate(section.blocks):
        if top and index == 0 and isinstance(block, Table):
            console.print(table_renderable(block, section.title, max_rows=None))
            continue
        _block(block, console, figures, max_rows, verbose)
    for sub in section.subsections:
        if not [b for b in sub.blocks if not isinstance(b, FIGURE_TYPES)] and not sub.subsections:
            figures += [b.title for b in sub.blocks if isinstance(b, FIGURE_TYPES)]
            continue
        console.print(terminal(f"{section.title} · {sub.title}", "bold"))
        render_section(sub, console, top=False, max_rows=max_rows, verbose=verbose)
    if figures and top:
        kinds = ", ".join(dict.fromkeys(figures))
        # the hint to ask for a report only where none was asked for
        where = "(--html FILE)" if html_path is None else html_path
        console.print(terminal(f"plots ({kinds}): in the HTML report {where}", "dim"))


def render_sections(
    sections: Sequence[Section], console: Console, *, verbose: bool, html_path: str | None = None
) -> None:
    for section in sections:
        render_section(section, console, verbose=verbose, html_path=html_path)


def pinning_words(machine: MachineInfo, *, pin: bool) -> str:
    """Where the run measured: its CPU, or why it names none (--no-pin was asked for; a Ray
    cluster's cells each pin a CPU of their own node, which the driver's facts do not hold)."""
    pinned = machine.pinned_cpu
    if pinned is not None:
        return f"pinned to CPU {pinned}"
    cluster = machine.cluster
    if isinstance(cluster, Mapping):
        nodes = cluster.get("nodes", "?")
        return f"on a Ray cluster of {nodes} node{'' if nodes == 1 else 's'}"
    return "not pinned (--no-pin)" if not pin else "not pinned"


def render_terminal(
    result: RunResult, console: Console, *, verbose: bool = False, html_path: str | None = None
) -> None:
    """The verdicts, what each lens found and the warnings; `verbose` adds the informational
    notes, whole assembly diffs and whole names (the HTML report has all of it). `html_path`:
    the HTML report written beside it, if any."""
    machine = result.machine
    header = Text()
    header.append(result.title.removeprefix("perflab "), style="bold")
    header.append(f"  {result.status.value}  {result.created_at}  ")
    header.append(visible(f"{'?' if machine.cpu_model is None else machine.cpu_model}, "))
    header.append(pinning_words(machine, pin=result.experiment.settings.pin))
    console.print(header)
    # a failure the notes below hold (with its hint) is not said twice
    said = ("failed:", "not measured:")
    if result.error and not any(n.message.startswith(said) for n in result.notes):
        console.print(terminal(f"error: {result.error}", "red", keep_newlines=True))
    render_sections(result.sections, console, verbose=verbose, html_path=html_path)
    from perflab.report.provenance_views import (
        provenance_table,  # git variants: where each came from
    )

    provenance = provenance_table(result)
    if provenance is not None:
        console.print(provenance)
    render_sections(design_sections(result), console, verbose=verbose, html_path=html_path)
    if not result.comparisons and not result.measurements:
        console.print(Text("no comparisons (nothing was measured)", style="yellow"))
    if result.differences:
        console.print(
            Text("variants differ in: ", style="bold") + terminal("; ".join(result.differences))
        )
    elif len(result.experiment.variants) > 1 and not result.cross_run:
        console.print(Text("variants are identical (an A/A test)", style="bold"))
    _print_notes(result, console, verbose=verbose)


def _note_line(group: NoteGroup) -> Text:
    """A note group in one line: its severity, where, message, count and hint."""
    warning = group.severity is Severity.WARNING
    line = Text(f"{group.severity.value}: ", style="yellow" if warning else "dim")
    if group.where:
        line.append(visible(f"[{group.where}] "), style="" if warning else "dim")
    line.append(visible(group.message, keep_newlines=True), style="" if warning else "dim")
    if group.count > 1:
        line.append(f" (×{group.count})", style="dim")
    if group.hint:
        line.append(visible(f"\n  hint: {group.hint}", keep_newlines=True), style="dim")
    return line


def _print_notes(result: RunResult, console: Console, *, verbose: bool) -> None:
    """The warnings (and with `verbose` the informational notes), then how many are hidden."""
    # prose wraps to the window on a terminal; a pipe or a file gets whole lines
    soft_wrap = not console.is_terminal
    groups = group_notes(result.notes)
    shown = [g for g in groups if verbose or g.severity is Severity.WARNING]
    for group in shown:
        console.print(_note_line(group), soft_wrap=soft_wrap)
    if len(shown) < len(groups):
        hidden = len(groups) - len(shown)
        console.print(
            Text(f"{hidden} more note{'s' if hidden > 1 else ''}: --verbose, or --html", "dim")
        )


def render_run_list(runs: Sequence[RunSummary], console: Console) -> None:
    """The stored runs as a terminal table."""
    table = RichTable(title="stored runs", title_justify="left")
    for column in ("run", "created", "status", "benchmarks", "variants", "metrics", "samples"):
        table.add_column(column)
    for run in runs:
        cells = (
            str(run.run_id),
            run.created_at,
            run.status.value,
            _shorten(", ".join(run.benchmarks)),
            ", ".join(
                f"{v}@{run.provenance[v]['commit'][:10]}" if v in run.provenance else v
                for v in run.variants
            ),
            ", ".join(run.metrics),
            str(run.n_samples),
        )
        table.add_row(*(terminal(cell) for cell in cells))
    console.print(table if runs else Group(Text("the store holds no runs yet")))


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
