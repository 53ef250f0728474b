"""The differential flame graph (report/svg/flame.py): a frame's colour by how its share
changed, saturating no sooner than two points, frames too narrow to see left out, names escaped."""

from __future__ import annotations

from perflab.records.document import FlameNode
from perflab.report.svg.flame import (
    GROWTH,
    NEUTRAL,
    SHRINK,
    delta_colour,
    flame_colour_scale,
    flame_graph,
    flame_legend,
    visible_depth,
)


def hex_of(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def test_a_frame_is_neutral_unchanged_red_as_it_grows_blue_as_it_shrinks() -> None:
    assert delta_colour(0.0, 0.05) == hex_of(NEUTRAL)
    assert delta_colour(0.05, 0.05) == hex_of(GROWTH) == delta_colour(0.5, 0.05)  # saturated
    assert delta_colour(-0.05, 0.05) == hex_of(SHRINK)
    assert delta_colour(0.02, 0.05) not in (hex_of(NEUTRAL), hex_of(GROWTH))
    assert delta_colour(0.1, 0.0) == hex_of(NEUTRAL)


def test_the_scale_is_the_largest_change_but_never_below_two_points() -> None:
    noise = FlameNode("main", "", 1.0, 1.0, (FlameNode("f", "", 0.5, 0.505),))
    assert flame_colour_scale(noise) == 0.02  # an A/A's noise stays pale
    changed = FlameNode("main", "", 1.0, 1.0, (FlameNode("f", "", 0.2, 0.3),))
    assert abs(flame_colour_scale(changed) - 0.1) < 1e-12


def test_frames_too_narrow_to_draw_add_no_height_nor_a_rectangle() -> None:
    tiny = FlameNode("deep", "", 0.0001, 0.0001, (FlameNode("deeper", "", 0.0001, 0.0001),))
    root = FlameNode("main", "prog", 1.0, 1.0, (FlameNode("work <T>", "", 0.6, 0.6), tiny))
    assert visible_depth(root, 1000, 1.0) == 2
    drawn = flame_graph(root, width=1000)
    assert drawn.count("<rect") == 2
    assert "work &lt;T&gt;" in drawn and "deeper" not in drawn
    assert "baseline 60.00% → variant 60.00% (+0.00 points)" in drawn


def test_the_legend_spans_the_scale_both_ways() -> None:
    legend = flame_legend(0.05)
    assert legend.count("<rect") == 9
    assert "−5.0 pt" in legend and "+5.0 pt" in legend
