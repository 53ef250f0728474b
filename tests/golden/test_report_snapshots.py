"""Snapshots of each lens's section as the terminal and Markdown show it, from the synthetic run
of the HTML tests: a change of layout or wording shows up as a diff here. Regenerate with
PERFLAB_UPDATE_SNAPSHOTS=1 after checking the new output by eye."""

from __future__ import annotations

import json
from typing import Any

import pytest

from perflab.lenses.registry import DESCRIPTORS
from perflab.report.design_views import design_sections
from perflab.report.json_report import run_to_json
from perflab.report.markdown import render_markdown, section_lines
from perflab.report.terminal import render_section, render_terminal
from tests.support.design_runs import matrix_run, stack_run
from tests.support.report_runs import synthetic_run
from tests.support.snapshots import check, terminal_text

# a registered lens whose section is snapshotted elsewhere -> why, and where
ELSEWHERE = {
    "rss": "analysed only where a run asks for it: test_a_run_with_rss_in_the_terminal_...",
    "memory": "a cache simulation's run of its own: tests/golden/test_memory_snapshots.py",
    "track": "its verdict table alone, higher and lower: tests/unit/lenses/track/test_render.py",
}
# every registered lens, so a new one is snapshotted (or says where) without editing this list
LENSES = tuple(str(d.metric) for d in DESCRIPTORS if str(d.metric) not in ELSEWHERE)


def test_every_lens_not_snapshotted_here_is_a_registered_lens() -> None:
    assert set(ELSEWHERE) <= {str(d.metric) for d in DESCRIPTORS}


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


def _rounded(value: Any) -> Any:
    """Floats to 9 significant digits: a confidence interval's last bits follow the machine's
    libm, the snapshot's meaning does not."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def test_a_run_with_rss_in_the_terminal_markdown_and_json() -> None:
    """The rss lens's section where a run asks for it (its samples analysed by the lens), and
    its comparisons in the JSON document."""
    result, _ = synthetic_run(rss=True)
    (section,) = [s for s in result.sections if s.key == "rss"]
    check("rss.terminal.txt", terminal_text(lambda console: render_section(section, console)))
    check("rss.md", "\n".join(section_lines(section)) + "\n")
    document = run_to_json(result)
    rss = [c for c in document["comparisons"] if c["metric"] == "rss"]
    check("rss.json", json.dumps(_rounded(rss), indent=2) + "\n")


@pytest.mark.parametrize("design", ("stack", "matrix"))
def test_stack_and_matrix_sections_in_both_formats(design: str) -> None:
    run = stack_run() if design == "stack" else matrix_run()
    (section,) = design_sections(run)
    check(f"{design}.terminal.txt", terminal_text(lambda console: render_section(section, console)))
    check(f"{design}.md", "\n".join(section_lines(section)) + "\n")
