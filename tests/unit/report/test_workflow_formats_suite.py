"""A suite's history in words, from records made here: the one line names the benchmarks that
changed, the Markdown and the HTML page put their histories first, the JSON keeps a series per
benchmark."""

from __future__ import annotations

import dataclasses

from perflab.records.kinds import Metric
from perflab.records.workflow_results import (
    HistoryChange,
    HistoryPoint,
    HistoryResult,
    SuiteHistory,
)
from perflab.report.workflow_formats import (
    suite_history_headline,
    suite_history_html,
    suite_history_markdown,
)


def series(name: str, values: list[float], *, change_at: int | None = None) -> HistoryResult:
    points = tuple(
        HistoryPoint(f"{i:040x}", f"commit {i}", f"{i:040x}", v, "ns", 1)
        for i, v in enumerate(values)
    )
    changes: tuple[HistoryChange, ...] = ()
    if change_at is not None:
        before, after = points[change_at - 1], points[change_at]
        ratio = values[change_at] / values[change_at - 1]
        changes = (
            HistoryChange(
                index=change_at,
                before=before,
                after=after,
                series_ratio=ratio,
                ratio=ratio,
                ci_low=ratio * 0.9,
                ci_high=ratio * 1.1,
                confirmed=True,
                run_id=2,
            ),
        )
    return HistoryResult(
        range_text="v1..main",
        metric=Metric.TIME,
        threshold=0.2,
        points=points,
        changes=changes,
        measured_now=3,
        seconds=1.0,
        benchmark=name,
    )


def suite() -> SuiteHistory:
    return SuiteHistory(
        range_text="v1..main",
        metric=Metric.TIME,
        threshold=0.2,
        series=(
            series("test_steady", [10.0, 10.0, 10.0]),
            series("test_changed", [10.0, 40.0, 40.0], change_at=1),
        ),  # fmt: skip
        measured_now=3,
        seconds=1.0,
    )


def test_the_line_names_the_benchmarks_that_changed() -> None:
    line = suite_history_headline(suite())
    assert line.startswith("1 of 2 benchmarks changed in time per iteration beyond 20.0%")
    assert line.endswith(", confirmed by a direct comparison: test_changed")
    assert "test_steady" not in line


def test_a_benchmark_with_candidates_alone_is_named_apart_from_those_that_changed() -> None:
    found = suite()
    unconfirmed = dataclasses.replace(found.series[1].changes[0], confirmed=False)
    alone = dataclasses.replace(found.series[1], changes=(unconfirmed,))
    line = suite_history_headline(dataclasses.replace(found, series=(found.series[0], alone)))
    assert line == (
        "no benchmark of 2 changed in time per iteration beyond 20.0% across 3 commits by a "
        "confirmed change point (1 with candidates a direct comparison did not confirm: "
        "test_changed)"
    )


def test_a_steady_suite_says_so() -> None:
    steady = SuiteHistory("v1..main", Metric.TIME, 0.2, (series("a", [1.0, 1.0]),), 2, 1.0)
    assert suite_history_headline(steady) == (
        "no benchmark of 1 changed in time per iteration beyond 20.0% across 2 commits"
    )


def test_markdown_puts_the_changed_benchmarks_first() -> None:
    text = suite_history_markdown(suite())
    assert text.index("##### test\\_changed") < text.index("##### test\\_steady")


def test_the_json_keeps_a_series_per_benchmark() -> None:
    document = suite().to_json()
    assert [s["benchmark"] for s in document["series"]] == ["test_steady", "test_changed"]
    assert [len(s["changes"]) for s in document["series"]] == [0, 1]


def test_the_page_draws_a_trend_per_benchmark_the_changed_first() -> None:
    page = suite_history_html(suite(), change_links={"test_changed": {1: "h-change1.html"}})
    assert page.count("<polyline") == 2  # one trend per benchmark
    assert page.index("1 of 2 benchmarks changed") < page.index('<section id="history-1">')
    assert page.index("<h2>test_changed</h2>") < page.index("<h2>test_steady</h2>")
    # the table of the benchmarks links each one's part of the page
    assert '<a href="#history-1">test_changed</a>' in page
    assert '<a href="#history-2">test_steady</a>' in page
    assert 'href="h-change1.html"' in page
