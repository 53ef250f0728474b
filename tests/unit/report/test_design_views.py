"""Stacks and matrices as report sections (report/design_views.py): built once from their
analysis, then laid out by the terminal, Markdown and HTML renderers like a lens's section."""

from __future__ import annotations

import pytest
from rich.console import Console

from perflab.records.document import Paragraph, Style, Table, WaterfallFigure
from perflab.report import svg
from perflab.report.design_views import design_sections, matrix_grids
from perflab.report.html import render_html
from perflab.report.markdown import render_markdown
from perflab.report.terminal import render_terminal
from tests.support.design_runs import matrix_run, stack_run


def test_a_stack_is_a_section_of_its_steps_and_their_waterfall() -> None:
    (section,) = design_sections(stack_run())
    assert section.key == "stack"
    overview = section.blocks[0]
    assert isinstance(overview, Table)
    ((*_, verdict),) = overview.rows
    assert (verdict.text, verdict.style) == ("adds up to the whole", Style.EQUIVALENT)
    (detail,) = section.subsections
    assert detail.title == "sorted(data), time"
    steps, figure = detail.blocks
    assert isinstance(steps, Table) and isinstance(figure, WaterfallFigure)
    assert [row[0].text for row in steps.rows] == [
        "cache-the-key vs base",
        "inline-call vs cache-the-key",
        "fast-path vs inline-call",
        "whole: fast-path vs base",
        "steps multiplied",
    ]
    # each step's bar starts where the one before ended; the product and the whole start at 1
    bars = figure.bars
    for before, after in zip(bars[:2], bars[1:3], strict=True):
        assert after.start == before.end
    assert bars[1].ratio == 0.91 and bars[1].ci_low == pytest.approx(bars[1].start * 0.91 * 0.97)
    assert [b.start for b in bars[3:]] == [1.0, 1.0]
    assert [b.style for b in bars] == [Style.FASTER] * 3 + [Style.MUTED, Style.FASTER]


def test_a_stack_whose_steps_miss_the_whole_says_so() -> None:
    (section,) = design_sections(stack_run(whole_ratio=0.9))
    overview = section.blocks[0]
    assert isinstance(overview, Table)
    ((*_, verdict),) = overview.rows
    assert (verdict.text, verdict.style) == ("does NOT add up to the whole", Style.INCONCLUSIVE)
    (figure,) = [b for b in section.subsections[0].blocks if isinstance(b, WaterfallFigure)]
    assert "do NOT multiply up" in figure.summary
    assert "do NOT multiply up" in svg.waterfall(figure)  # the plot's label says it


def test_a_matrix_is_its_interactions_then_a_grid_per_benchmark_and_metric() -> None:
    (section,) = design_sections(matrix_run())
    assert section.key == "matrix"
    table, explanation = section.blocks
    assert isinstance(table, Table) and isinstance(explanation, Paragraph)
    ((*_, on_base, on_reference, ratio, verdict),) = table.rows
    assert on_base.text == "release: 1.000 equivalent" and on_reference.style is Style.FASTER
    assert (ratio.text, verdict.text, verdict.style) == (
        "1.250 [1.200, 1.300]",
        "worse-on-base",
        Style.SLOWER,
    )
    time_grid, event_grid = section.subsections
    assert event_grid.title == "sorted(data), counters cache-misses"
    grid = time_grid.blocks[0]
    assert isinstance(grid, Table)
    assert grid.columns == ("change", "on main", "on release", "interaction release / main")
    fix_a, fix_b = grid.rows
    assert fix_a[3].text == "1.250 [1.200, 1.300] worse-on-base"
    assert (fix_b[2].text, fix_b[2].style) == ("not measured", Style.MUTED)
    assert fix_b[3].text == ""  # no interaction without both cells


def test_pairs_that_are_not_changes_on_bases_make_no_grid() -> None:
    run = stack_run()
    assert matrix_grids(run.experiment, run.comparisons, ()) == ()
    assert [s.key for s in design_sections(run)] == ["stack"]


def test_every_format_lays_out_the_same_sections() -> None:
    for run, key, words in (
        (stack_run(), "stack", "steps multiplied"),
        (matrix_run(), "matrix", "interaction release / main"),
    ):
        console = Console(width=160, record=True, color_system=None, force_terminal=False)
        render_terminal(run, console)
        assert words in console.export_text()
        markdown = render_markdown(run)
        assert f"#### {key}" in markdown and words in markdown
        page = render_html(run)
        assert f'id="metric-{key}"' in page and f'id="details-{key}"' in page
        assert words in page
    assert "waterfall of the steps" in render_html(stack_run())
