"""Every lens has a section, and every format shows it."""

from __future__ import annotations

import dataclasses

from perflab.lenses.sections import lens_sections
from perflab.records.document import Section
from tests.support.report_runs import synthetic_run

SUBJECT = "perflab.lenses.sections"


def test_every_lens_has_a_section_and_every_format_shows_it() -> None:
    from rich.console import Console

    from perflab.report.html import render_html
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    result, _ = synthetic_run()
    keys = [s.key for s in result.sections]
    # the summary joining the lenses comes first, then one section per lens
    assert keys == ["summary", *(m.value for m in result.experiment.settings.metrics)]
    console = Console(width=200, record=True)
    render_terminal(result, console)
    terminal, markdown, page = console.export_text(), render_markdown(result), render_html(result)
    for section in result.sections:
        assert f"#### {section.title}" in markdown
        assert f'id="metric-{section.key}"' in page
        assert section.title in terminal
    rebuilt = lens_sections(
        dataclasses.replace(
            result, findings=(), variant_info={}, notes=(), cross_run=False, measurements=()
        )
    )
    assert all(isinstance(s, Section) for s in rebuilt) and len(rebuilt) == len(keys) - 1
