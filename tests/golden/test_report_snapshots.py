"""Snapshots of each lens's section as the terminal and Markdown show it, from the synthetic run
of the HTML tests: a change of layout or wording shows up as a diff here. Regenerate with
PERFLAB_UPDATE_SNAPSHOTS=1 after checking the new output by eye."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console

from perflab.report.design_views import design_sections
from perflab.report.markdown import render_markdown, section_lines
from perflab.report.terminal import render_section, render_terminal
from tests.support.report_runs import synthetic_run
from tests.unit.report.test_design_views import matrix_run, stack_run

DATA = Path(__file__).parent / "data" / "report"
UPDATE = os.environ.get("PERFLAB_UPDATE_SNAPSHOTS") == "1"
LENSES = ("time", "instructions", "counters", "profile", "asm", "torch")


def check(name: str, text: str) -> None:
    path = DATA / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no snapshot {name}: run with PERFLAB_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


def terminal_text(render: object) -> str:
    console = Console(width=140, record=True, color_system=None, force_terminal=False)
    assert callable(render)
    render(console)
    return console.export_text()


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
