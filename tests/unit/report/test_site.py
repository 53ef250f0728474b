"""A published site's pages (report/site.py): a trend's table of its latest commits and its
change points, and a sparkline of no more points than pixels."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from perflab.publish import publish, read_site
from perflab.report import site
from perflab.report.site import SPARK_WIDTH, sparkline
from tests.support.published_runs import COMMITS, SLOW_FROM
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)


def test_a_long_trend_s_table_lists_the_latest_commits_and_its_change_points(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site, "TABLE_ROWS", 1)  # of 5 commits, the change point at the 4th
    done = publish(tmp_path / "site", store)
    parse = next(t for t in done.site.trends if t.benchmark == "parse")
    page = (tmp_path / "site" / f"trend-{parse.key}.html").read_text()
    table = page[page.index("the latest 1 of 5 commits") :]
    listed = [c for c, _ in COMMITS if c[:10] in table]
    assert listed == [c for c, _ in COMMITS[SLOW_FROM - 1 :]]  # either side of it, the latest


def test_a_sparkline_draws_a_point_per_pixel_column_at_most(store: Path) -> None:

    trend = read_site(store).trends[0]
    long = replace(trend, history=replace(trend.history, points=trend.history.points * 100))
    drawn = re.search(r'points="([^"]+)"', sparkline(long))
    assert drawn is not None and 100 < len(drawn.group(1).split()) <= SPARK_WIDTH


def test_a_change_point_names_the_commit_measured_before_it(store: Path) -> None:
    """The change lies after the commit measured before it: a history that measured every Nth
    commit would otherwise pin it on the commit it measured next."""
    table = site.site_changes_table(read_site(store).recent)
    assert table.columns[:3] == ("commit", "since", "subject")
    slower = [row for row in table.rows if row[0].text == COMMITS[SLOW_FROM][0][:10]]
    assert slower and all(row[1].text == COMMITS[SLOW_FROM - 1][0][:10] for row in slower)
    assert "git log SINCE..COMMIT" in (table.caption or "")


def test_a_candidate_no_direct_comparison_confirmed_is_drawn_apart_and_not_counted(
    store: Path,
) -> None:
    trend = next(t for t in read_site(store).trends if t.history.changes)
    [change, *_] = trend.history.changes
    assert change.confirmed
    assert 'stroke="#8c959f"' not in sparkline(trend) and site.confirmed_changes(trend) >= 1
    candidate = replace(change, confirmed=False)
    alone = replace(trend, history=replace(trend.history, changes=(candidate,)))
    drawn = sparkline(alone)
    assert 'fill="none" stroke="#8c959f"' in drawn  # a hollow grey ring, not a coloured dot
    assert "0 confirmed change point(s)" in drawn and site.confirmed_changes(alone) == 0
