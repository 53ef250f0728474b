"""`perflab publish` on a store written here (runs of git= variants, as history and bisect store
them): the trends and their change points, the pages and their links, hostile names kept inert.
What a second publish writes, keeps and removes is in test_writer.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.publish import commit_line, publish, read_site
from perflab.records.results import RunResult
from perflab.store import SqliteStore, StoredRun
from tests.support.published_runs import BENCHMARKS, COMMITS, HOSTILE, SLOW_FROM, write_run
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)


def test_each_benchmark_and_lens_is_a_trend_with_the_history_s_change_points(store: Path) -> None:
    site = read_site(store)
    assert sorted(t.benchmark for t in site.trends) == sorted(b.name for b in BENCHMARKS)
    parse = next(t for t in site.trends if t.benchmark == "parse")
    assert [p.commit for p in parse.history.points] == [c for c, _ in COMMITS]
    (change,) = parse.history.changes
    assert change.after.commit == COMMITS[SLOW_FROM][0] and change.confirmed
    assert change.run_id == 2 and change.ratio is not None and 1.25 < change.ratio < 1.35
    assert site.recent[0].change == change and site.unconfirmed == 0
    # each benchmark's change point is confirmed by its own comparison in the shared run
    other = next(t for t in site.trends if t.benchmark == HOSTILE)
    (faster,) = other.history.changes
    assert faster.confirmed and faster.ratio is not None and 0.65 < faster.ratio < 0.75


def test_commits_are_ordered_by_what_the_runs_say_not_by_when_they_were_seen(
    tmp_path: Path,
) -> None:
    """A bisect stores GOOD against each step, steps out of order: the order is each run's."""
    opened = SqliteStore.open(tmp_path / "p.db")
    try:
        write_run(opened, [COMMITS[0], COMMITS[4]], ["good", "c5"], seed=1)
        write_run(opened, [COMMITS[0], COMMITS[2]], ["good", "c3"], seed=2)
        write_run(opened, [COMMITS[2], COMMITS[3]], ["before", "after"], seed=3)
        runs = opened.runs_of_code()
    finally:
        opened.close()
    line = [c.commit for c in commit_line(runs)]
    assert line[0] == COMMITS[0][0] and line.index(COMMITS[2][0]) < line.index(COMMITS[3][0])


def test_the_site_links_the_change_point_to_its_run_and_its_trend(
    store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    done = publish(out, store)
    assert set(done.written) == {p.name for p in out.glob("*.html")} and not done.unchanged
    front = (out / "index.html").read_text()
    parse = next(t for t in done.site.trends if t.benchmark == "parse")
    # the answer first: the change point, named, then the grid
    assert front.index(COMMITS[SLOW_FROM][0][:10]) < front.index('id="trends"')
    assert 'href="run-2.html"' in front and f'href="trend-{parse.key}.html"' in front
    assert "slower" in front and "faster" in front and "2 confirmed change points" in front
    for target in re.findall(r'href="([^"#]+)"', front):
        assert (out / target).is_file(), target
    trend = (out / f"trend-{parse.key}.html").read_text()
    assert '<a href="run-1.html"><circle' in trend  # a point links its run
    assert '<a href="run-2.html"><line' in trend  # the change point its comparison
    assert '<a href="index.html">' in trend  # and back to the front page
    assert "perflab run 2" in (out / "run-2.html").read_text()


def test_hostile_names_stay_text(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    publish(out, store)
    for page in out.glob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "<b>bold" not in text, page.name
    front = (out / "index.html").read_text()
    assert "&lt;script&gt;alert(" in front


def test_a_run_of_many_comparisons_gets_a_light_page_and_a_few_the_whole_report(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perflab.publish import run_page
    from perflab.report.html import render_html

    opened = SqliteStore.open(store, create=False)
    try:
        whole = {run_id: render_html(analyse_run(opened.load_run(run_id))) for run_id in (1, 2)}
    finally:
        opened.close()
    publish(tmp_path / "site", store)
    assert (tmp_path / "site" / "run-1.html").read_text() == whole[1]  # as show --html draws it
    monkeypatch.setattr(run_page, "MANY_COMPARISONS", 4)  # run 1 has 8, run 2 has 2
    out = tmp_path / "light"
    publish(out, store)
    light = (out / "run-1.html").read_text()
    assert "every comparison (8)" in light and "all 8 comparisons of the run" in light
    assert light.count("<svg") < whole[1].count("<svg") and len(light) < len(whole[1]) / 2
    assert (out / "run-2.html").read_text() == whole[2]  # the change point's comparison
    monkeypatch.setattr(run_page, "MANY_COMPARISONS", 1)
    publish(tmp_path / "lightest", store)
    focused = (tmp_path / "lightest" / "run-2.html").read_text()
    # the change points' comparisons, still drawn in full, and the table of all of them
    assert "every comparison (2)" in focused and focused.count("<svg") == whole[2].count("<svg")


def test_the_grid_filters_by_machine_where_the_store_holds_several(
    store: Path, tmp_path: Path
) -> None:
    path = tmp_path / "two.db"
    opened = SqliteStore.open(path)
    try:
        write_run(opened, COMMITS[:3], ["a", "b", "c"], seed=1, machine={"hostname": "ci-1"})
        write_run(opened, COMMITS[2:], ["c", "d", "e"], seed=2, machine={"hostname": HOSTILE})
    finally:
        opened.close()
    done = publish(tmp_path / "site", path)
    assert {t.machines for t in done.site.trends} == {tuple(sorted(("ci-1", HOSTILE)))}
    front = (tmp_path / "site" / "index.html").read_text()
    assert '<select id="filter-machine">' in front and "<option>ci-1</option>" in front
    assert "data-machines='[\"\\u003cscript\\u003e" in front  # JSON, its markup escaped
    assert "<script>alert" not in front
    publish(tmp_path / "one", store)  # one machine: no filter to offer
    assert 'id="filter-machine"' not in (tmp_path / "one" / "index.html").read_text()


def test_a_publish_analyses_for_a_light_page_only_what_it_draws(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perflab.publish import run_page

    monkeypatch.setattr(run_page, "MANY_COMPARISONS", 4)  # run 1 has 8, run 2 has 2
    seen: dict[int, set[str]] = {}

    def analyse(run: StoredRun) -> RunResult:
        seen[run.run_id] = {s.benchmark for s in run.samples}
        return analyse_run(run)

    publish(tmp_path / "site", store, analyse=analyse)
    # the change points link run 2 (drawn whole: few comparisons), none run 1 (no samples read)
    assert seen == {1: set(), 2: {b.name for b in BENCHMARKS}}
    page = (tmp_path / "site" / "run-1.html").read_text()
    assert "figures only (no notes, measurements or explanations" in page
    assert 'id="notes"' not in page
