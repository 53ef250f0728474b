"""The HTML report: its SVG plot functions (pure) and the page, from records built here."""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from perflab.analyse.run import with_sections
from perflab.lenses.asm.render import diff_lines
from perflab.lenses.profile.flame import differential_tree
from perflab.lenses.time.analyse import analyse_time
from perflab.records.document import GroupRatios
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import (
    Benchmark,
    BenchmarkData,
    Comparison,
    Note,
    Sample,
    Severity,
)
from perflab.records.settings import Settings
from perflab.report import svg
from perflab.report.html import render_html
from perflab.report.svg.axes import linear_ticks, log_ticks, ratio_domain
from perflab.report.svg.canvas import VERDICT_COLOURS, fit_label, wrap_label
from perflab.report.svg.flame import delta_colour
from perflab.report.svg.ratio_plots import NO_SPEED_VERDICT
from perflab.report.svg.samples import generation_spans, value_range
from perflab.tool_output.profile_stacks import Stack, parse_folded
from tests.support.report_runs import (
    ASM_DIFF,
    BASELINE_FOLDED,
    VARIANT_FOLDED,
    series_of,
    synthetic_run,
)

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.report.html"

SVG_NS = "{http://www.w3.org/2000/svg}"


def parse_svg(text: str) -> ET.Element:
    """Well-formed XML is what a browser's SVG parser needs; ElementTree checks that."""
    root = ET.fromstring(text)
    assert root.tag == f"{SVG_NS}svg"
    return root


def elements(root: ET.Element, tag: str) -> list[ET.Element]:
    return list(root.iter(f"{SVG_NS}{tag}"))


# --- axes -----------------------------------------------------------------------------------


def test_linear_ticks_are_round_and_cover_the_range() -> None:
    assert linear_ticks(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    ticks = linear_ticks(9.3e3, 1.12e4, 4)
    assert all(9.3e3 <= t <= 1.12e4 for t in ticks) and len(ticks) >= 3
    assert linear_ticks(5, 5) == [5]


def test_log_ticks_keep_one_and_stay_few() -> None:
    near = log_ticks(0.97, 1.04)
    assert 1.0 in near and all(0.97 <= t <= 1.04 for t in near)
    wide = log_ticks(0.9, 40)
    assert 1.0 in wide and len(wide) <= 8 and 10 in wide


def test_ratio_domain_holds_one_the_band_and_finite_values() -> None:
    low, high = ratio_domain([1.5, 0.0, math.inf, math.nan], 0.01)
    assert low < 0.99 and high > 1.5


def test_fit_label_cuts_with_an_ellipsis() -> None:
    assert fit_label("short", 200) == "short"
    cut = fit_label("a_rather_long_function_name", 60)
    assert cut.endswith("…") and len(cut) < 12
    assert fit_label("name", 10) == ""


# --- forest plot ----------------------------------------------------------------------------


def test_forest_plot_marks_every_estimable_row_against_one_and_the_band() -> None:
    rows = [
        svg.ForestRow("time · <b>&</b> · B vs A", 1.05, 1.02, 1.08, Verdict.SLOWER),
        svg.ForestRow("time · x · C vs A", 0.999, 0.995, 1.004, Verdict.EQUIVALENT),
        svg.ForestRow("unbounded", 1.2, 0.0, math.inf, Verdict.INCONCLUSIVE),
        svg.ForestRow("nothing", math.nan, 0.0, math.inf, Verdict.INCONCLUSIVE),
    ]
    root = parse_svg(svg.forest_plot(rows, band=0.01))
    circles = elements(root, "circle")
    assert len(circles) == 3  # the NaN row has none
    assert circles[0].get("fill") == VERDICT_COLOURS[Verdict.SLOWER]
    texts = [t.text or "" for t in elements(root, "text")]
    assert "not estimable" in texts
    assert any("<b>&</b>" in t for t in texts)  # escaped in the source, intact when parsed
    assert "1" in texts  # the axis is labelled at 1
    # the two unbounded ends of row 3 are arrowheads
    assert len(elements(root, "path")) == 2
    band = elements(root, "rect")[0]
    assert "equivalence band" in (band.findtext(f"{SVG_NS}title") or "")


def test_forest_plot_places_ratios_in_order_on_a_log_axis() -> None:
    rows = [
        svg.ForestRow("a", 0.5, 0.45, 0.55, Verdict.FASTER),
        svg.ForestRow("b", 2.0, 1.8, 2.2, Verdict.SLOWER),
    ]
    root = parse_svg(svg.forest_plot(rows, band=0.01))
    x_half, x_double = (float(c.get("cx", "0")) for c in elements(root, "circle"))
    one_line = next(ln for ln in elements(root, "line") if ln.get("stroke-dasharray"))
    x_one = float(one_line.get("x1", "0"))
    assert x_half < x_one < x_double
    # log scale: 1/2 and 2 are equally far from 1
    assert abs((x_one - x_half) - (x_double - x_one)) < 1.0


def test_forest_plot_shows_whole_labels_wrapped_never_cut() -> None:
    label = "counters · task-clock-of-a-very-long-benchmark-name · context-switches · B vs A"
    rows = [svg.ForestRow(label, 1.0, 0.99, 1.01, Verdict.EQUIVALENT)]
    root = parse_svg(svg.forest_plot(rows, band=0.01, width=400))
    shown = "".join(t.text or "" for t in elements(root, "text"))  # lines joined
    assert "…" not in shown
    for part in ("counters", "task-clock-of-a-very-long-benchmark-name", "context-switches"):
        assert part in shown
    assert wrap_label("a · b", 1000) == ["a · b"]
    assert "".join(wrap_label("x" * 40, 100)) == "x" * 40


def test_exact_intervals_are_diamonds_in_their_verdict_colour_never_amber() -> None:
    rows = [
        svg.ForestRow("size", 9.969, 9.969, 9.969, Verdict.INCONCLUSIVE),
        svg.ForestRow("count", 1.0, 1.0, 1.0, Verdict.EQUIVALENT),
    ]
    root = parse_svg(svg.forest_plot(rows, band=0.01))
    diamonds = [p for p in elements(root, "path") if "Z" in (p.get("d") or "")]
    colours = [d.get("fill") for d in diamonds]
    assert colours == [NO_SPEED_VERDICT, VERDICT_COLOURS[Verdict.EQUIVALENT]]
    assert VERDICT_COLOURS[Verdict.INCONCLUSIVE] not in colours


def test_an_uninformative_interval_does_not_set_the_axis_and_is_marked_clipped() -> None:
    rows = [
        svg.ForestRow("time", 1.05, 1.02, 1.08, Verdict.SLOWER),
        svg.ForestRow("torch", 0.617, 0.002, 186.666, Verdict.INCONCLUSIVE),
    ]
    root = parse_svg(svg.forest_plot(rows, band=0.01))
    ticks = [
        float(t.text) for t in elements(root, "text") if (t.text or "").replace(".", "").isdigit()
    ]
    assert min(ticks) > 0.1 and max(ticks) < 10  # not 0.001 ... 100
    arrows = [p for p in elements(root, "path") if p.get("fill") and "Z" in (p.get("d") or "")]
    assert len(arrows) == 2  # both ends of the torch row are beyond the axis
    texts = [t.text or "" for t in elements(root, "text")]
    assert "0.617 [0.002, 186.666]" in texts  # the numbers stay whole


# --- samples over time ----------------------------------------------------------------------


def test_value_range_cuts_a_far_outlier_but_keeps_both_modes() -> None:
    bimodal = [12.0] * 20 + [19.0] * 20
    low, high = value_range(bimodal)
    assert low < 12 and high > 19
    low, high = value_range([10.0, 10.2, 9.9, 10.1, 10.05, 100.0])
    assert high < 11
    low, high = value_range([5.0, 5.0])
    assert low < 5 < high


def test_time_scatter_draws_a_panel_per_variant_with_warmups_hollow_and_outliers_on_the_edge() -> (
    None
):
    series = [
        series_of("A (baseline)", [10.0, 10.1, 9.9, 10.0, 10.2, 10.1, 9.8, 1000.0], warmup=2),
        series_of("B", [20.0, 21.0, 19.5, 20.5, 20.0, 20.2, 19.9, 20.1]),
    ]
    root = parse_svg(svg.time_scatter(series))
    circles = elements(root, "circle")
    assert len(circles) == 15  # 16 samples, one of them off scale
    assert sum(c.get("fill") == "none" for c in circles) == 2  # warm-up: hollow
    off_scale = [p for p in elements(root, "path") if "off scale" in "".join(p.itertext())]
    assert len(off_scale) == 1
    labels = [t.text or "" for t in elements(root, "text")]
    assert "A (baseline)" in labels and "B" in labels
    # alternate generations are shaded (generation 1 of 0, 1)
    assert any("generation 1" in "".join(r.itertext()) for r in elements(root, "rect"))


def test_generation_spans_follow_time_order() -> None:
    series = [series_of("A", [1.0] * 8), series_of("B", [1.0] * 8)]
    spans = generation_spans(series)
    assert [g for g, _, _ in spans] == [0, 1]
    assert [(a, b) for _, a, b in spans] == [pytest.approx((0.0, 0.3)), pytest.approx((0.4, 0.7))]


def test_generation_plot_has_a_dot_per_generation_and_the_overall_ratio() -> None:
    series = [GroupRatios("B vs A", 1, ((0, 1.02), (1, 1.04), (2, 1.03)), 1.03, 1.01, 1.05)]
    root = parse_svg(svg.generation_plot(series, band=0.01, group_name="batch"))
    assert len(elements(root, "circle")) == 3 + 1  # and the legend's swatch
    assert len(elements(root, "polyline")) == 1
    texts = [t.text or "" for t in elements(root, "text")]
    assert any("batch" in t for t in texts)
    assert "B vs A" in texts  # the legend says which comparison each colour is


def test_time_analysis_gives_the_ratio_of_every_generation() -> None:
    def sample(variant: str, generation: int, block: int, value: float) -> Sample:
        return Sample(
            benchmark="b",
            variant=variant,
            metric=Metric.TIME,
            name="wall_ns",
            value=value,
            loops=1,
            generation=generation,
            block=block,
        )

    baseline = [sample("A", g, b, 100.0) for g in range(2) for b in range(3)]
    variant = [sample("B", g, b, 110.0 if g == 0 else 120.0) for g in range(2) for b in range(3)]
    analysis = analyse_time(
        Benchmark("b", stmt="x"), ["A", "B"], BenchmarkData(tuple(baseline + variant)), Settings()
    )
    ratios = getattr(analysis.comparisons[0].details, "group_ratios", ())
    assert [g for g, _ in ratios] == [0, 1]
    assert ratios[0][1] == pytest.approx(1.1) and ratios[1][1] == pytest.approx(1.2)


# --- differential flame graph ---------------------------------------------------------------


def test_differential_tree_pairs_frames_by_symbol_with_inclusive_shares() -> None:
    tree = differential_tree(parse_folded(BASELINE_FOLDED), parse_folded(VARIANT_FOLDED))
    assert tree.symbol == "all" and tree.baseline_share == 1 and tree.variant_share == 1
    (main,) = tree.children
    (evaluate,) = main.children
    assert evaluate.object == "libpy2.so"  # the variant names the frame: its width is drawn
    by_name = {c.symbol: c for c in evaluate.children}
    assert list(by_name) == ["helper", "new_thing", "sort"]  # alphabetical
    assert by_name["sort"].baseline_share == pytest.approx(0.6)
    assert by_name["sort"].variant_share == pytest.approx(0.5)
    assert by_name["new_thing"].baseline_share == 0
    assert by_name["new_thing"].delta == pytest.approx(0.1)
    assert tree.depth == 5


def test_differential_tree_of_empty_profiles() -> None:
    empty: Counter[Stack] = Counter()
    tree = differential_tree(empty, empty)
    assert tree.variant_share == 0 and tree.children == ()


def test_delta_colour_is_neutral_red_or_blue() -> None:
    assert delta_colour(0.0, 0.05) == "#e2dcd2"
    assert delta_colour(0.05, 0.05) == "#d64032"
    assert delta_colour(-1.0, 0.05) == "#346ec4"
    half = delta_colour(0.025, 0.05)
    assert half not in ("#e2dcd2", "#d64032")


def test_flame_graph_widths_are_variant_shares_and_colours_the_change() -> None:
    tree = differential_tree(parse_folded(BASELINE_FOLDED), parse_folded(VARIANT_FOLDED))
    root = parse_svg(svg.flame_graph(tree, width=1000))
    frames = {
        (g.findtext(f"{SVG_NS}title") or "").split("  (")[0].split("\n")[0]: g.find(f"{SVG_NS}rect")
        for g in elements(root, "g")
    }
    assert set(frames) == {"all", "main", "eval", "sort", "compare", "helper", "new_thing"}
    width = {
        name: float(rect.get("width", "0")) for name, rect in frames.items() if rect is not None
    }
    assert width["sort"] == pytest.approx(500, abs=1)
    assert width["new_thing"] == pytest.approx(100, abs=1)
    new_thing = frames["new_thing"]
    assert new_thing is not None and new_thing.get("fill") == delta_colour(0.1, 0.3)
    # the root sits at the bottom, callees above
    y = {name: float(rect.get("y", "0")) for name, rect in frames.items() if rect is not None}
    assert y["all"] > y["main"] > y["eval"] > y["sort"] > y["compare"]


def test_flame_graph_skips_frames_too_narrow_to_see() -> None:
    folded = "a`root;a`wide 999\na`root;a`narrow;a`deep;a`deeper 1\n"
    tree = differential_tree(parse_folded(folded), parse_folded(folded))
    root = parse_svg(svg.flame_graph(tree, width=500, min_frame_px=1.0))
    names = {(t.text or "") for t in elements(root, "title")}
    assert not any(n.startswith("narrow") for n in names)
    assert root.get("height") == str(3 * 17 + 4)  # all, root, wide: no room for the narrow tower
    parse_svg(svg.flame_legend(0.05))


# --- the page -------------------------------------------------------------------------------


def test_render_html_shows_every_part_of_a_run() -> None:
    result, run = synthetic_run()
    page = render_html(result)
    assert page.startswith("<!DOCTYPE html>")
    for expected in (
        "perflab run 7",
        "AMD EPYC 9R14",
        "yes (Amazon EC2)",
        "Variants differ in:",
        "env SHUFFLE: presorted=None, shuffled=1",
        'class="verdict slower"',
        "15.000 [14.700, 15.300]",
        "±2.0%",
        "task-clock",  # the counters table has an event column
        "Time: details",
        "raw samples",
        "Per-generation ratios",
        "aten::add",
        "torch 2.13.0",
        "differential flame graph",
        "<code>helper</code> is outlined now: +12 self",  # perflab's `code` as code
        "merge_at",
        "appeared in shuffled: merge_at",
        "(~2 min more)",
        "now 512-bit",
        '<span class="add">+   vmaxps zmm0, zmm1, zmm2</span>',
        "hint: check for background jobs",
    ):
        assert expected in page, expected
    # warnings come before infos
    assert page.index("26% slower") < page.index("sample times look bimodal")
    # 1 forest + 1 scatter + 1 generation plot + flame legend + flame graph
    assert page.count("<svg ") == 5
    for svg_text in re.findall(r"<svg .*?</svg>", page, flags=re.S):
        parse_svg(svg_text)


def test_render_html_is_self_contained() -> None:
    result, run = synthetic_run()
    page = render_html(result)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page and "<link" not in page and "@import" not in page


def test_render_html_of_two_runs_compared_leaves_out_the_sample_times() -> None:
    result, _ = synthetic_run()
    page = render_html(with_sections(dataclasses.replace(result, cross_run=True)))
    assert "raw samples</h4>" not in page and "differential flame graph" in page
    assert page.count("<svg ") == 4  # forest, generation ratios, flame legend and graph


def test_render_html_escapes_names() -> None:
    result, run = synthetic_run()
    evil = Note(Severity.WARNING, "<script>alert(1)</script>", benchmark="<b>")
    page = render_html(dataclasses.replace(result, notes=(evil,)))
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_diff_lines_classify_markers_and_cap_length() -> None:
    kinds = [line.style.value for line in diff_lines(ASM_DIFF)]
    assert kinds == ["", "del", "add", "gap", "moved"]
    long = diff_lines("+ x\n" * 1000)
    assert len(long) == 401 and long[-1].style.value == "gap"


def test_render_html_of_an_empty_run() -> None:
    result, _ = synthetic_run()
    empty = dataclasses.replace(result, comparisons=(), notes=(), sections=())
    page = render_html(empty)
    assert "No comparisons" in page


# --- stacks ---------------------------------------------------------------------------------


def test_the_waterfall_axis_covers_its_bars_and_its_labels_are_whole() -> None:
    from perflab.records.results import Interval, StackSummary
    from perflab.report.design_views import waterfall_figure

    def step(base: str, variant: str, ratio: float) -> Comparison:
        return Comparison(
            benchmark="b",
            metric=Metric.TIME,
            baseline=base,
            variant=variant,
            ratio=ratio,
            ci_low=ratio * 0.98,
            ci_high=ratio * 1.02,
            verdict=Verdict.FASTER,
            baseline_value=1.0,
            variant_value=ratio,
            unit="ns",
        )

    long_name = "task-cleanup-of-the-dispatcher-and-the-kernel-launch"
    summary = StackSummary(
        benchmark="b",
        metric=Metric.TIME,
        steps=(step("base", "s1", 0.7), step("s1", long_name, 0.8)),
        whole=step("base", long_name, 0.557),
        product=Interval(0.56, 0.54, 0.58),
        consistent=True,
    )
    root = parse_svg(svg.waterfall(waterfall_figure(summary, band=0.01)))
    texts = [t.text or "" for t in elements(root, "text")]
    ticks = [float(t) for t in texts if t.replace(".", "").isdigit()]
    assert min(ticks) <= 0.6  # the axis reaches the bars that end at 0.557
    assert any(long_name in t for t in texts)  # not cut
