"""Markdown for a pull request: each lens's verdicts first, its details folded, then notes.
Sections come from analysis; this module only lays them out."""

from __future__ import annotations

import re

from perflab.records.document import (
    FIGURE_TYPES,
    Block,
    Paragraph,
    Preformatted,
    Section,
    Style,
    Table,
)
from perflab.records.results import RunResult
from perflab.report.design_views import design_sections
from perflab.report.escape import markdown, markdown_prose, visible
from perflab.report.notes import group_notes

_ICONS = {
    Style.FASTER: "🟢 ",
    Style.SLOWER: "🔴 ",
    Style.EQUIVALENT: "⚪ ",
    Style.INCONCLUSIVE: "🟡 ",
    Style.INVALID: "⛔ ",
}
# a preformatted block (a diff) is cut here, the rest counted, so a Markdown report stays
# readable as text; the HTML report has the whole
MAX_PREFORMATTED_LINES = 120


def _cell(text: str) -> str:
    """Document text is plain text holding names: nothing in it is Markdown or HTML."""
    return markdown(text)


def _fence(lines: list[str]) -> str:
    """A code fence longer than any run of backticks in the lines, so none closes it."""
    longest = max((len(run) for line in lines for run in re.findall("`+", line)), default=0)
    return "`" * max(3, longest + 1)


def table_lines(table: Table) -> list[str]:
    """A table as Markdown lines, numeric columns right-aligned."""
    lines = []
    if table.caption:
        lines += [f"*{_cell(table.caption)}*", ""]
    lines.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
    lines.append(
        "|"
        + "|".join("---:" if table.is_numeric(i) else "---" for i in range(len(table.columns)))
        + "|"
    )
    for row in table.rows:
        lines.append(
            "| " + " | ".join(_ICONS.get(cell.style, "") + _cell(cell.text) for cell in row) + " |"
        )
    if table.omitted_rows:
        lines.append(f"\n{table.omitted_rows} more rows in the JSON output.")
    return lines + [""]


def block_lines(block: Block) -> list[str]:
    """One block as Markdown lines, laid out in full (no folding)."""
    if isinstance(block, Table):
        return table_lines(block)
    if isinstance(block, Paragraph):
        text = markdown_prose(block.text)
        return [f"**{text}**" if block.style is Style.EMPHASIS else text, ""]
    if isinstance(block, Preformatted):
        lines = [visible(line.text) for line in block.lines[:MAX_PREFORMATTED_LINES]]
        if len(block.lines) > len(lines):
            lines.append(f"… {len(block.lines) - len(lines)} more lines")
        fence = _fence(lines)
        return [f"{_cell(block.title)}:", "", f"{fence}diff", *lines, fence, ""]
    if isinstance(block, FIGURE_TYPES):
        return [f"*{_cell(block.title)}: a plot in the HTML report (`--html FILE`)*", ""]
    return []


def section_lines(section: Section) -> list[str]:
    """A section as Markdown lines: its first table shown, the rest of its blocks in a collapsed
    details element."""
    lines = [f"#### {_cell(section.title)}", ""]
    blocks = list(section.blocks)
    first = blocks[0] if blocks else None
    if isinstance(first, Table):
        lines += table_lines(first)
        blocks = blocks[1:]
    details: list[str] = []
    for block in blocks:
        details += block_lines(block)
    for sub in section.subsections:
        details += [f"**{_cell(sub.title)}**", ""]
        for block in sub.blocks:
            details += block_lines(block)
    if details:
        lines += [
            f"<details><summary>{_cell(section.title)}: details</summary>",
            "",
            *details,
            "</details>",
            "",
        ]
    return lines


def render_markdown(result: RunResult) -> str:
    """The whole report in Markdown (for a pull request or a wiki)."""
    lines = [f"### {result.title} ({result.status.value})", ""]
    for section in (*result.sections, *design_sections(result)):
        lines += section_lines(section)
    if not result.comparisons and not result.measurements:
        lines += ["No comparisons: nothing was measured.", ""]
    machine = result.machine
    cpu_model = "?" if machine.cpu_model is None else machine.cpu_model
    lines.append(
        f"Machine: {_cell(cpu_model)}, {machine.cores} cores, "
        f"kernel {_cell(str(machine.kernel))}, "
        + (
            f"pinned to CPU {machine.pinned_cpu}."
            if machine.pinned_cpu is not None
            else "not pinned."
        )
    )
    if result.differences:
        lines.append("Variants differ in: " + "; ".join(map(_cell, result.differences)) + ".")
    groups = group_notes(result.notes)
    if groups:
        lines += ["", "<details><summary>Notes</summary>", ""]
        for group in groups:
            where = f" [{_cell(group.where)}]" if group.where else ""
            count = f" (×{group.count})" if group.count > 1 else ""
            message = markdown_prose(group.message, line_break="<br>")
            lines.append(f"- **{group.severity.value}**{where}: {message}{count}")
            if group.hint:
                lines.append(f"  hint: {markdown_prose(group.hint, line_break='<br>')}")
        lines += ["", "Words used here: perflab's docs/glossary.md.", "", "</details>"]
    return "\n".join(lines) + "\n"
