"""A run's page in a published site (publish/run_page.py): a run of many comparisons is drawn
light, analysed in full only for the benchmarks of the change points that link it."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run, run_figures
from perflab.publish import run_page
from perflab.report.html import render_html
from perflab.store import SqliteStore
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)

SUBJECT = "perflab.publish.run_page"


def test_a_light_page_analyses_only_the_benchmarks_of_its_change_points(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_page, "MANY_COMPARISONS", 4)  # run 1 has 8 comparisons
    opened = SqliteStore.open(store, create=False)
    try:
        stored = opened.load_run(1)
        code = opened.runs_of_code()[0]
    finally:
        opened.close()
    commits = run_page.commits_of(code)
    figures = run_figures(stored)
    linked = next(c for c in figures if c.benchmark == "parse")
    focus = frozenset({("parse", commits[linked.baseline], commits[linked.variant])})
    assert run_page.drawn_benchmarks(figures, focus, commits) == {"parse"}
    part = analyse_run(stored.of_benchmarks({"parse"}))
    whole = analyse_run(stored)
    # exact: each benchmark is analysed on its own, at the run's family size
    assert part.comparisons == tuple(c for c in whole.comparisons if c.benchmark == "parse")
    assert {n.benchmark for n in part.notes} <= {"parse", None}
    page = run_page.run_page_result(part, figures, focus, commits)
    assert [(c.baseline, c.variant) for c in page.comparisons] == [
        (linked.baseline, linked.variant)
    ]
    html = render_html(page)
    assert "every comparison (8)" in html  # every comparison's figures, both benchmarks'
    assert (
        "analysed in full 1 of the run&#x27;s 2 benchmarks, those of its change points (parse)"
        in html
    )
    # no change point links the run: figures only, and the page says so
    nothing = run_page.drawn_benchmarks(figures, frozenset(), commits)
    assert nothing == frozenset()
    empty = analyse_run(stored.of_benchmarks(nothing))
    assert empty.comparisons == () and not any(n.benchmark for n in empty.notes)
    bare = render_html(run_page.run_page_result(empty, figures, frozenset(), commits))
    assert "no notes, measurements or explanations were derived" in bare
    assert "every comparison (8)" in bare
