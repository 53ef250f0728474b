"""The comment of `perflab check` and the page of `perflab history` with hostile commit
subjects: a subject can hold Markdown, HTML and newlines, and says nothing more than itself."""

from __future__ import annotations

from perflab.records.bisect import Commit, StepOutcome, StepState
from perflab.records.kinds import Metric
from perflab.records.workflow_results import CheckResult, HistoryChange, HistoryPoint, HistoryResult
from perflab.report.workflow_formats import check_markdown, history_html
from tests.support.report_runs import synthetic_run

HOSTILE = "fix | *x*\n### ✅ no regression\n<script>alert(1)</script>"


def test_the_comment_keeps_a_hostile_subject_on_its_line() -> None:
    result, _ = synthetic_run()
    checked = CheckResult(
        base_ref="origin/main",
        base=Commit("a" * 40, "base"),
        head=Commit("b" * 40, HOSTILE),
        metric=Metric.TIME,
        threshold=0.02,
        outcome=StepOutcome(StepState.BAD, 1.2, 1.1, 1.3),
        result=result,
    )
    comment = check_markdown(checked, report_link="report.html")
    assert comment.startswith("### perflab check: ❌ regression")
    lines = comment.splitlines()
    assert [line for line in lines if line.startswith("#")] == [lines[0]]  # no heading smuggled
    assert "<script>" not in comment
    assert "fix \\| " in comment and "\\\\|" not in comment  # its pipe does not split a table
    assert "[The full report" in comment and "(report.html)" in comment


def test_the_history_page_escapes_subjects_and_links_the_change() -> None:
    points = tuple(
        HistoryPoint(f"{i:040x}", HOSTILE if i == 2 else f"c{i}", "t", v, "instructions")
        for i, v in enumerate([100.0, 100.0, 150.0, 150.0])
    )
    change = HistoryChange(
        index=2,
        before=points[1],
        after=points[2],
        series_ratio=1.5,
        ratio=1.5,
        ci_low=1.5,
        ci_high=1.5,
        confirmed=True,
        run_id=7,
    )
    page = history_html(
        HistoryResult(
            range_text="a..b",
            metric=Metric.INSTRUCTIONS,
            threshold=0.02,
            points=points,
            changes=(change,),
            measured_now=4,
            seconds=1.0,
        ),
        change_links={2: "trend-change1.html"},
    )
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.count("<polyline") == 1 and page.count("<circle") == 4
    assert 'href="trend-change1.html"' in page
