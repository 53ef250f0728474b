"""Plots of ratios (report/svg/ratio_plots.py): the forest plot's marks by verdict and exactness,
intervals beyond the axis arrowed, the waterfall's bars and whiskers, the ratio per generation."""

from __future__ import annotations

import math

from perflab.records.document import GroupRatios, Style, WaterfallBar, WaterfallFigure
from perflab.records.kinds import Verdict
from perflab.report.svg.canvas import VERDICT_COLOURS
from perflab.report.svg.ratio_plots import (
    NO_SPEED_VERDICT,
    ForestRow,
    forest_plot,
    generation_plot,
    waterfall,
)


def test_a_forest_row_is_a_dot_or_for_an_exact_count_a_diamond() -> None:
    rows = [
        ForestRow("parse <a>", 1.05, 1.03, 1.07, Verdict.SLOWER),
        ForestRow("instructions", 0.9, 0.9, 0.9, Verdict.FASTER),
    ]
    drawn = forest_plot(rows, band=0.01)
    assert drawn.count("<circle") == 1 and drawn.count(' Z" fill=') >= 1
    assert "parse &lt;a&gt;: 1.0500 [1.0300, 1.070] slower" in drawn
    assert VERDICT_COLOURS[Verdict.SLOWER] in drawn
    assert "equivalence band 0.99 – 1.01" in drawn
    assert rows[1].exact and not rows[0].exact


def test_an_exact_inconclusive_count_is_drawn_without_a_speed_colour() -> None:
    drawn = forest_plot([ForestRow("code size", 1.2, 1.2, 1.2, Verdict.INCONCLUSIVE)], band=0.01)
    assert NO_SPEED_VERDICT in drawn and "(exact: no speed verdict)" in drawn


def test_an_interval_beyond_the_axis_ends_in_arrows_and_an_unestimable_ratio_says_so() -> None:
    wide = ForestRow("noisy", 1.1, 0.0, math.inf, Verdict.INCONCLUSIVE)
    drawn = forest_plot([ForestRow("b", 1.02, 1.01, 1.03, Verdict.SLOWER), wide], band=0.01)
    assert "[0.000, ∞]" in drawn
    assert drawn.count('fill="' + VERDICT_COLOURS[Verdict.INCONCLUSIVE] + '"/>') == 2  # arrows
    nothing = forest_plot(
        [ForestRow("gone", math.nan, 0.0, math.inf, Verdict.INCONCLUSIVE)], band=0.01
    )
    assert "not estimable" in nothing


def test_a_waterfall_has_a_bar_and_a_whisker_per_step() -> None:
    figure = WaterfallFigure(
        "stack",
        (
            WaterfallBar(
                label="step 1",
                start=1.0,
                end=1.1,
                ci_low=1.08,
                ci_high=1.12,
                ratio=1.1,
                style=Style.SLOWER,
            ),
            WaterfallBar(
                label="step 2",
                start=1.1,
                end=1.05,
                ci_low=0.0,
                ci_high=math.inf,
                ratio=0.955,
                style=Style.MUTED,
            ),
        ),
        band=0.01,
        summary="two steps",
    )
    drawn = waterfall(figure)
    assert 'aria-label="stack: two steps"' in drawn
    assert drawn.count('fill-opacity="0.75"') == 2
    assert drawn.count('stroke="#222"') == 1  # the unbounded step has no whisker
    assert "1.100" in drawn and "0.955" in drawn


def test_the_ratio_per_generation_with_each_comparisons_line_and_interval() -> None:
    series = [
        GroupRatios("B", 1, ((0, 1.02), (1, 1.04), (2, 0.0)), 1.03, 1.01, 1.05),
        GroupRatios("C", 2, ((0, 0.97), (1, 0.98)), 0.975, 0.0, math.inf),
    ]
    drawn = generation_plot(series, band=0.01, group_name="batch")
    assert "ratio per batch" in drawn and "batch (the unit the confidence interval" in drawn
    assert drawn.count("<polyline") == 2
    assert drawn.count('stroke-dasharray="6,3"') == 2
    assert drawn.count('fill-opacity="0.14"') == 1  # C's interval is unbounded: not shaded
