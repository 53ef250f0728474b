"""perflab's own `code` in notes: a code span in every format, its content escaped."""

from __future__ import annotations

import dataclasses

from perflab.records.model import Note, Severity
from tests.support.report_runs import synthetic_run


def test_code_in_a_note_reads_as_code_in_every_format() -> None:
    """perflab's own `code` in notes and hints: a code span in Markdown (it was shown with its
    backticks escaped), <code> in HTML, the backticks as written on a terminal; the names
    around it stay escaped."""
    from rich.console import Console

    from perflab.report.html import render_html
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    result, _ = synthetic_run()
    note = Note(
        Severity.WARNING,
        "`fast_1` and `base` differ only in INF=1: is `INF` read by the benchmark?",
        hint="search with `perflab events WORD`; a_b",
    )
    result = dataclasses.replace(result, notes=(note,))
    markdown = render_markdown(result)
    assert "`fast_1` and `base` differ only in INF=1: is `INF` read by the benchmark?" in markdown
    assert "hint: search with `perflab events WORD`; a\\_b" in markdown
    page = render_html(result)
    assert "<code>fast_1</code> and <code>base</code> differ only in INF=1" in page
    assert "hint: search with <code>perflab events WORD</code>" in page
    console = Console(width=200, record=True)
    render_terminal(result, console)
    assert "`fast_1` and `base` differ only in INF=1" in console.export_text()


def test_code_spans_stay_text() -> None:
    """What a code span may hold: no raw HTML reaches Markdown (code with <, > or & stays
    escaped text), an unpaired backtick stays a backtick, HTML escapes inside <code>."""
    from perflab.report.escape import code_spans, html_prose, markdown_prose

    assert code_spans("a `b` c `d") == [("a ", False), ("b", True), (" c `d", False)]
    assert markdown_prose("a `b` c `d") == "a `b` c \\`d"
    assert markdown_prose("check `x<1` failed") == "check \\`x&lt;1\\` failed"
    assert markdown_prose("`x |y` *z*") == "`x |y` \\*z\\*"
    assert markdown_prose("` x`") == "`  x `"  # Markdown strips one space each side
    assert markdown_prose("`a`\n`b\x1b`", line_break="<br>") == "`a`<br>`b\\x1b`"
    assert html_prose("`<b>` & `c`") == "<code>&lt;b&gt;</code> &amp; <code>c</code>"
