"""The history and bisect views as sections: what each table, figure and paragraph holds, and
the history's page drawn from them."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from perflab.records.bisect import (
    Commit,
    EvidenceRun,
    EvidenceSource,
)
from perflab.records.document import Paragraph, Section, Style, Table, TrendFigure
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.workflow_results import HistoryChange, HistoryPoint, HistoryResult
from perflab.report.workflow_formats import (
    history_html,
    history_markdown,
    render_bisect,
    render_history,
)
from perflab.report.workflow_views import bisect_section, history_section
from tests.support.workflow_runs import NOTE, bisect_run, history_run


def _tables(section: Section) -> list[Table]:
    return [b for b in section.blocks if isinstance(b, Table)]


def _texts(section: Section) -> list[str]:
    return [b.text for b in section.blocks if isinstance(b, Paragraph)]


def _rows(section: Section) -> Table:
    """The table of every commit: the history's last."""
    return _tables(section)[-1]


def test_the_history_table_shows_nodes_and_values_as_measured_only_across_nodes() -> None:
    across = _rows(history_section(history_run()))
    assert across.columns == ("commit", "subject", "value", "as measured", "", "run", "node")
    first = [cell.text for cell in across.rows[0]]
    assert first == ["00abababab", "commit number 0", "900 ns", "1,000 ns", "reused", "1", "beta"]
    one = _rows(history_section(history_run(nodes=False)))
    assert one.columns == ("commit", "subject", "value", "", "run")
    skipped = [c.text for c in one.rows[2]]
    assert skipped == [
        "02abababab",
        "commit number 2",
        "-",
        "skipped: the build failed: exited with status 1",
        "",
    ]


def test_values_levelled_across_runs_are_shown_beside_those_as_measured() -> None:
    one = history_run(nodes=False)
    points = tuple(
        dataclasses.replace(p, levelled_value=p.value * 0.5) if i == 7 and p.value else p
        for i, p in enumerate(one.points)
    )
    table = _rows(history_section(dataclasses.replace(one, points=points)))
    assert table.columns == ("commit", "subject", "value", "as measured", "", "run")
    assert [cell.text for cell in table.rows[7]][2:4] == ["605 ns", "1,210 ns"]


def test_a_change_point_is_marked_in_its_row_in_the_direction_it_moved() -> None:
    table = _rows(history_section(history_run()))
    assert (table.rows[4][4].text, table.rows[4][4].style) == ("change 1.490", Style.SLOWER)
    # a step no direct comparison confirmed is a candidate, marked apart (muted)
    unconfirmed = (table.rows[6][4].text, table.rows[6][4].style)
    assert unconfirmed == ("candidate 0.810, not confirmed", Style.MUTED)
    confirmed = dataclasses.replace(history_run().changes[1], confirmed=True)
    both = dataclasses.replace(history_run(), changes=(history_run().changes[0], confirmed))
    row = _rows(history_section(both)).rows[6][4]
    assert (row.text, row.style) == ("change 0.810", Style.FASTER)


def test_the_trend_holds_the_measured_commits_at_their_place_on_the_line() -> None:
    section = history_section(history_run(), change_links={4: "trend-change1.html"})
    (trend,) = [b for b in section.blocks if isinstance(b, TrendFigure)]
    assert trend.positions == 8
    assert [p.position for p in trend.points] == [0, 1, 3, 4, 5, 6, 7]  # the skipped one: a gap
    assert trend.points[0].value == 900.0  # normalised: the value compared along the history
    assert trend.points[0].label == "00abababab commit number 0: 900 ns on beta"
    assert trend.axis_labels == tuple(f"{i:02d}ababa" for i in range(8))  # unmeasured too
    assert [(m.position, m.style, m.href) for m in trend.marks] == [
        (4, Style.SLOWER, "trend-change1.html"),
        (6, Style.MUTED, ""),  # not confirmed: grey, and said so
    ]
    assert trend.marks[1].label.endswith("a candidate not confirmed by a direct comparison")
    assert "1 confirmed change point(s) and 1 candidate(s) not confirmed" in trend.summary


def test_the_change_points_link_their_comparison_and_say_what_bisect_would_find() -> None:
    section = history_section(history_run(nodes=False), change_links={4: "trend-change1.html"})
    table = _tables(section)[0]
    assert table.columns[:3] == ("commit", "subject", "before → after")
    rise = [c.text for c in table.rows[0]]
    assert rise[:3] == ["04abababab", "make the loop | slower *a lot*", "1,005 → 1,500 ns"]
    assert rise[3:] == ["1.490", "1.500 [1.450, 1.550]", "confirmed", "21"]
    assert table.rows[0][-1].href == "trend-change1.html"
    assert (table.rows[1][-1].text, table.rows[1][-1].href) == ("22, reused", "")
    (hint,) = [t for t in _texts(section) if "were not measured" in t]
    assert "2 commit(s) between 05abababab and 06abababab" in hint
    assert "`perflab bisect 05abababab 06abababab`" in hint


def test_a_change_point_that_another_lens_disputes_says_so_in_its_row() -> None:
    faster = LensDisagreement(
        gate=Metric.TIME,
        gate_ratio=1.49,
        gate_verdict=Verdict.SLOWER,
        other=Metric.INSTRUCTIONS,
        other_ratio=0.9,
        other_ci_low=0.9,
        other_ci_high=0.9,
        other_verdict=Verdict.FASTER,
        decisive=True,
        other_countable=True,
    )
    result = history_run(nodes=False)
    rise = dataclasses.replace(result.changes[0], disagreement=faster)
    section = history_section(dataclasses.replace(result, changes=(rise, result.changes[1])))
    table = _tables(section)[0]
    assert table.columns[-2:] == ("other lens", "run")
    assert [row[-2].text for row in table.rows] == ["10.0% fewer instructions", ""]
    uncounted = dataclasses.replace(
        rise, disagreement=dataclasses.replace(faster, other_countable=False)
    )
    table = _tables(history_section(dataclasses.replace(result, changes=(uncounted,))))[0]
    assert (
        table.rows[0][-2].text == "10.0% less instructions"
    )  # the analysis's word, not the name's
    assert table.rows[0][-2].style is Style.EMPHASIS
    said = "04abababab: 49.0% more time, but 10.0% fewer instructions: the history follows time"
    assert any(text.startswith(said) for text in _texts(section))
    assert _tables(history_section(result))[0].columns[-2:] == ("", "run")  # none: no column


def test_the_history_starts_with_its_answer_then_the_trend_then_the_rows() -> None:
    section = history_section(history_run(nodes=False))
    kinds = [type(b).__name__ for b in section.blocks]
    assert kinds[:3] == ["Paragraph", "Paragraph", "Table"]  # what changed, what was not measured
    assert (
        kinds.index("Table")
        < kinds.index("TrendFigure")
        < len(kinds) - 1 - kinds[::-1].index("Table")
    )
    headline, unmeasured = _texts(section)[:2]
    # the candidate no direct comparison confirmed is said apart, not counted as a change point
    assert headline == (
        "1 change point in time per iteration beyond 2.0% across 8 commits, confirmed by a "
        "direct comparison (and 1 candidate a direct comparison did not confirm)"
    )
    assert unmeasured == "not measured (1): 02abababab: the build failed: exited with status 1"
    assert not section.subsections


def test_the_commits_not_measured_are_named_by_reason_a_long_list_cut() -> None:
    points = tuple(
        HistoryPoint(f"{i:02d}" + "ef" * 19, f"c{i}", "t", None if i else 1.0, "ns",
                     skipped="" if i == 0 else "it crashed" if i < 8 else "no build")
        for i in range(10)
    )  # fmt: skip
    result = HistoryResult(
        range_text="a..b",
        metric=Metric.TIME,
        threshold=0.02,
        points=points,
        changes=(),
        measured_now=1,
        seconds=1.0,
    )
    texts = _texts(history_section(result))
    assert texts[0] == "no change beyond 2.0% across 10 commits"
    assert texts[1] == (
        "not measured (7): 01efefefef, 02efefefef, 03efefefef, 04efefefef, 05efefefef and 2 more "
        "(the rows below): it crashed"
    )
    assert texts[2] == "not measured (2): 08efefefef, 09efefefef: no build"


def test_a_history_without_change_points_says_so_and_keeps_its_notes() -> None:
    quiet = dataclasses.replace(history_run(), threshold=0.05, changes=())
    section = history_section(quiet)
    assert not section.subsections and len(_tables(section)) == 1
    texts = _texts(section)
    assert texts[0] == "no change beyond 5.0% across 8 commits"
    (trend,) = [b for b in section.blocks if isinstance(b, TrendFigure)]
    assert not trend.marks and "Dashed" not in trend.explanation
    assert "8 commits: 5 measured now, 2 reused, 1 skipped, in 93 s" in texts
    assert f"info: {NOTE}" in texts


def test_a_history_with_nothing_measured_has_no_trend_and_its_page_is_drawn() -> None:
    points = (HistoryPoint("a" * 40, "broken", "t", skipped="no build"),)
    result = HistoryResult(
        range_text="a..b",
        metric=Metric.INSTRUCTIONS,
        threshold=0.02,
        points=points,
        changes=(),
        measured_now=0,
        seconds=1.0,
    )
    assert not [b for b in history_section(result).blocks if isinstance(b, TrendFigure)]
    page = history_html(result, change_links={})
    assert "<svg" not in page and "skipped: no build" in page


def test_the_history_page_draws_the_trend_and_links_the_change() -> None:
    page = history_html(history_run(), change_links={4: "trend-change1.html"})
    assert page.count("<polyline") == 1 and page.count("<circle") == 7
    assert page.count('href="trend-change1.html"') == 2  # the dashed line and the run's cell
    assert "stroke-dasharray" in page and NOTE in page
    assert "make the loop | slower *a lot*" in page  # a subject is text, never markup


def test_the_bisect_section_names_the_culprit_or_what_is_left() -> None:
    found = bisect_section(bisect_run())
    (steps,) = _tables(found)
    states = [row[5].text for row in steps.rows]
    assert states == ["bad", "skipped", "good", "inconclusive (3x)", "bad"]
    assert steps.rows[1][4].text == "-"
    texts = _texts(found)
    # the answer first, then the search path
    assert isinstance(found.blocks[0], Paragraph) and found.blocks[0].text == texts[0]
    assert texts[0] == "first bad commit: 06cdcdcdcd subject 6"
    assert found.blocks.index(steps) == 1
    assert "skipped 03cdcdcdcd subject 3: the build failed" in texts
    assert "first bad commit: 06cdcdcdcd subject 6" in texts
    assert "evidence: the culprit against its first parent is run 40" in texts
    left = _texts(bisect_section(bisect_run(found=False)))
    assert "the first bad commit is one of: 05cdcdcdcd subject 5, 06cdcdcdcd subject 6" in left
    assert "step 6 stayed inconclusive after 3 tries" in left


def test_the_terminal_shows_both_views_whole() -> None:
    console = Console(record=True, width=200, color_system=None)
    render_history(history_run(), console)
    render_bisect(bisect_run(), console)
    text = console.export_text()
    assert "history: v1.0..main, time per iteration" in text and "07abababab" in text
    assert "1 change point in time" in text and "plots (trend): in the HTML report" in text
    assert "first bad commit: 06cdcdcdcd subject 6" in text


def test_a_long_history_in_the_terminal_says_its_answer_again_under_the_rows() -> None:
    points = tuple(
        HistoryPoint(f"{i:02d}" + "cd" * 19, f"c{i}", "t", 100.0 if i < 20 else 150.0, "ns")
        for i in range(30)
    )
    change = HistoryChange(
        index=20,
        before=points[19],
        after=points[20],
        series_ratio=1.5,
        ratio=1.5,
        ci_low=1.45,
        ci_high=1.55,
        confirmed=True,
        run_id=9,
    )
    console = Console(record=True, width=200, color_system=None)
    render_history(
        HistoryResult(
            range_text="a..b",
            metric=Metric.TIME,
            threshold=0.02,
            points=points,
            changes=(change,),
            measured_now=30,
            seconds=1.0,
        ),
        console,
    )
    lines = console.export_text().splitlines()
    headline = "1 change point in time per iteration beyond 2.0% across 30 commits"
    assert lines[1].startswith(headline)  # first, as in every format
    said = ", confirmed by a direct comparison: in the table above the rows"
    assert lines[-1] == headline + said
    short = Console(record=True, width=200, color_system=None)
    render_history(history_run(), short)
    assert short.export_text().count("1 change point in time") == 1  # it fits: said once


def test_the_history_in_markdown_leads_with_its_answer() -> None:
    text = history_markdown(history_run())
    lines = text.splitlines()
    assert lines[0].startswith("#### history: ")
    assert lines[2].startswith("**1 change point in time per iteration beyond 2.0%")
    changes = text.index("| commit | subject | before → after |")
    details = text.index("<details><summary>every commit (8)</summary>")
    rows = text.index("| commit | subject | value |")
    assert changes < details < rows  # the change points open, every commit folded after them
    assert "<svg" not in text and text.rstrip().endswith("</details>")
    quiet = history_markdown(dataclasses.replace(history_run(), changes=()))
    assert quiet.splitlines()[2] == "**no change beyond 2.0% across 8 commits**"


def test_the_history_page_says_what_changed_before_the_trend_and_the_rows() -> None:
    page = history_html(history_run(nodes=False), change_links={4: "trend-change1.html"})
    order = [
        page.index("1 change point in time per iteration"),
        page.index("not measured (1): 02abababab"),
        page.index('<th class="num">before → after</th>'),
        page.index("<svg"),
        page.index('<th class="num">value</th>'),
    ]
    assert order == sorted(order)


def test_a_culprit_inside_a_merge_is_the_answer_and_its_merge_is_named() -> None:
    from dataclasses import replace

    merge = Commit("ee" * 20, "Merge pull request #2")
    inner = Commit("dd" * 20, "a second loop")
    inside = replace(bisect_run(), culprit=inner, merges=(merge,), parent=Commit("cc" * 20, ""))
    found = bisect_section(inside)
    texts = _texts(found)
    assert (
        texts[0]
        == "first bad commit: dddddddddd a second loop (inside eeeeeeeeee Merge pull request #2)"
    )
    assert "on the first-parent line: eeeeeeeeee Merge pull request #2, a merge" in texts[1]
    assert "evidence: the culprit against its first parent cccccccccc is run 40" in texts
    document = inside.to_json()
    assert document["culprit"]["commit"] == inner.commit
    assert document["first_parent_culprit"]["commit"] == merge.commit
    assert list(document)[0] == "answer"  # the answer first
    by_hand = "inside the merge eeeeeeeeee: ...; to look inside it by hand: perflab bisect a b"
    stuck = replace(bisect_run(), culprit=merge, not_inside=by_hand)
    assert by_hand in _texts(bisect_section(stuck))


def test_a_bisection_of_a_suite_names_the_benchmark_it_followed() -> None:
    followed = dataclasses.replace(bisect_run(), benchmark="test_bench.py::test_changed")
    assert bisect_section(followed).title.startswith(
        "bisect: instructions of test_bench.py::test_changed against GOOD"
    )
    assert followed.to_json()["benchmark"] == "test_bench.py::test_changed"
    assert bisect_run().to_json()["benchmark"] is None
    assert " of " not in bisect_section(bisect_run()).title.split("against")[0]


def test_the_bisect_section_says_which_evidence_runs_were_reused() -> None:
    parent = Commit("cc" * 20, "")
    searched = EvidenceRun(35, (Metric.INSTRUCTIONS,), EvidenceSource.SEARCH)
    alone = dataclasses.replace(
        bisect_run(), parent=parent, evidence_run=35, evidence_runs=(searched,)
    )
    assert (
        "evidence: the culprit against its first parent cccccccccc: run 35, measured during "
        "the search"
    ) in _texts(bisect_section(alone))
    # a run of the lens the search's run lacked: each run with its lenses, each linked
    more = EvidenceRun(41, (Metric.TIME,))
    both = dataclasses.replace(alone, evidence_runs=(searched, more))
    assert (
        "evidence: the culprit against its first parent cccccccccc: run 35, measured during "
        "the search (instructions); run 41, measured for the evidence (time)"
    ) in _texts(bisect_section(both))
    (_, linked) = _tables(bisect_section(both, evidence_link="e.html", more_links=("e-41.html",)))
    assert [(r[0].text, r[1].text, r[1].href) for r in linked.rows] == [
        (
            "evidence: the culprit against its first parent cccccccccc: measured during the "
            "search (instructions)",
            "35",
            "e.html",
        ),
        ("measured for the evidence (time)", "41", "e-41.html"),
    ]
    assert both.to_json()["evidence_runs"][1] == {
        "run_id": 41,
        "metrics": ["time"],
        "source": "measured",
    }


def test_bisect_counts_in_the_plural_only_past_one() -> None:
    from perflab.report.workflow_views import number_of

    assert (number_of(1, "step"), number_of(2, "commit")) == ("1 step", "2 commits")
