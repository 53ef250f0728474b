"""Notes and captions say only what applies, in correct words (issue 38, item 6)."""

from __future__ import annotations

import random
from dataclasses import replace

from perflab.records.model import Benchmark, Experiment, Variant
from tests.unit.test_time_columns import _comparison, _samples


def test_the_caption_names_batches_in_the_plural() -> None:
    from perflab.lenses.time.render import caption

    comparison, _ = _comparison(_samples(random.Random(6), preempted=(0.0, 0.0)))
    assert comparison.details is not None
    batched = replace(comparison, details=replace(comparison.details, group_name="batch"))
    text = caption([batched], 0.95)
    assert "the batches' medians" in text and "batchs" not in text


def test_one_comparison_is_said_in_the_singular() -> None:
    from perflab.plan.designs import budget_plan

    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    text = budget_plan(experiment)
    assert "(1 comparison)" in text and "(1 comparisons)" not in text


def test_the_plots_hint_names_the_report_when_one_was_written() -> None:
    import io

    from rich.console import Console

    from perflab.records.document import RatiosFigure, Section
    from perflab.report.terminal import render_section

    section = Section("time", (), (Section("b", (RatiosFigure("ratios", (), 0.01),)),))

    def said(html_path: str | None) -> str:
        console = Console(file=io.StringIO(), width=200, record=True)
        render_section(section, console, html_path=html_path)
        return console.export_text()

    assert "(--html FILE)" in said(None)
    written = said("report.html")
    assert "(--html FILE)" not in written and "report.html" in written
