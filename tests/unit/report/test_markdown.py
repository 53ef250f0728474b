"""Markdown for a pull request (report/markdown.py): verdict icons, numeric columns aligned, a
section's first table shown and the rest folded, code fenced so nothing closes the fence, names
escaped; a captured run's report from its title to its notes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from perflab.analyse.run import analyse_run
from perflab.records.document import (
    Cell,
    Paragraph,
    Preformatted,
    ScatterFigure,
    Section,
    Style,
    Table,
)
from perflab.report.markdown import (
    MAX_PREFORMATTED_LINES,
    block_lines,
    render_markdown,
    section_lines,
    table_lines,
)
from perflab.store.json_runs import load_document

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"
TABLE = Table(
    ("benchmark", "ratio"),
    ((Cell("a|b"), Cell("1.20", Style.SLOWER)), (Cell("c"), Cell("0.90", Style.FASTER))),
    numeric=(False, True),
    caption="time per iteration",
    omitted_rows=3,
)


def test_a_table_has_its_caption_aligned_numbers_icons_and_what_was_left_out() -> None:
    lines = table_lines(TABLE)
    assert lines[0] == "*time per iteration*"
    assert lines[3] == "|---|---:|"
    assert lines[4] == "| a\\|b | 🔴 1.20 |"  # a name's pipe does not split the cell
    assert lines[5] == "| c | 🟢 0.90 |"
    assert "3 more rows in the JSON output." in lines[6]


def test_code_is_fenced_longer_than_any_backticks_in_it_and_cut_when_long() -> None:
    block = Preformatted("the diff", (Cell("```python"),))
    fenced = block_lines(block)
    assert fenced[2] == "````diff" and fenced[4] == "````"
    long = Preformatted("long", tuple(Cell(f"l{i}") for i in range(MAX_PREFORMATTED_LINES + 5)))
    assert "… 5 more lines" in block_lines(long)


def test_a_figure_points_to_the_html_report_and_emphasis_is_bold() -> None:
    assert block_lines(ScatterFigure("samples over time", ())) == [
        "*samples over time: a plot in the HTML report (`--html FILE`)*",
        "",
    ]
    assert block_lines(Paragraph("mind this", Style.EMPHASIS))[0] == "**mind this**"


def test_a_sections_first_table_is_shown_and_the_rest_folded() -> None:
    section = Section(
        "time",
        (TABLE, Paragraph("more")),
        subsections=(Section("per benchmark", (Paragraph("x"),)),),
    )
    lines = section_lines(section)
    assert lines[0] == "#### time"
    folded = lines.index("<details><summary>time: details</summary>")
    assert lines.index("| c | 🟢 0.90 |") < folded < lines.index("more")
    assert "**per benchmark**" in lines and lines[-2] == "</details>"
    assert "<details>" not in "".join(section_lines(Section("bare", (TABLE,))))


def test_a_captured_runs_report_from_its_title_to_its_notes() -> None:
    result = analyse_run(load_document(CAPTURE))
    text = render_markdown(result)
    assert text.startswith(f"### perflab run {result.run_id} (complete)\n")
    assert "#### time" in text and "Machine: " in text
    assert "<details><summary>Notes</summary>" in text  # the run was preempted: said
    assert text.endswith("</details>\n")
    empty = dataclasses.replace(result, sections=(), comparisons=(), measurements=(), notes=())
    assert "No comparisons: nothing was measured." in render_markdown(empty)
