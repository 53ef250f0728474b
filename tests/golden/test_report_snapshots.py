"""Snapshots of each lens's section as the terminal and Markdown show it, from the synthetic run
of the HTML tests: a change of layout or wording shows up as a diff here. Regenerate with
PERFLAB_UPDATE_SNAPSHOTS=1 after checking the new output by eye."""

from __future__ import annotations

import pytest

from perflab.report.design_views import design_sections
from perflab.report.markdown import render_markdown, section_lines
from perflab.report.terminal import render_section, render_terminal
from tests.support.design_runs import matrix_run, stack_run
from tests.support.report_runs import synthetic_run
from tests.support.snapshots import check, terminal_text

LENSES = ("time", "instructions", "counters", "profile", "asm", "torch")


@pytest.mark.parametrize("lens", LENSES)
def test_each_lens_section_in_the_terminal(lens: str) -> None:
    result, _ = synthetic_run()
    (section,) = [s for s in result.sections if s.key == lens]
    check(f"{lens}.terminal.txt", terminal_text(lambda console: render_section(section, console)))


@pytest.mark.parametrize("lens", LENSES)
def test_each_lens_section_in_markdown(lens: str) -> None:
    result, _ = synthetic_run()
    (section,) = [s for s in result.sections if s.key == lens]
    check(f"{lens}.md", "\n".join(section_lines(section)) + "\n")


def test_the_whole_run_in_both_formats() -> None:
    result, _ = synthetic_run()
    check("run.terminal.txt", terminal_text(lambda console: render_terminal(result, console)))
    check("run.md", render_markdown(result))


@pytest.mark.parametrize("design", ("stack", "matrix"))
def test_stack_and_matrix_sections_in_both_formats(design: str) -> None:
    run = stack_run() if design == "stack" else matrix_run()
    (section,) = design_sections(run)
    check(f"{design}.terminal.txt", terminal_text(lambda console: render_section(section, console)))
    check(f"{design}.md", "\n".join(section_lines(section)) + "\n")
