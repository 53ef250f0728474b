"""The records of `perflab publish` (records/published.py): the runs a site's pages link, and
what a publish did, as JSON."""

from __future__ import annotations

from pathlib import Path

from perflab.publish import read_site
from perflab.records.published import Published, Site
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)

SUBJECT = "perflab.records.published"


def test_a_site_links_the_runs_of_its_points_and_of_its_change_points(store: Path) -> None:
    site = read_site(store)
    # run 1: the history's points; run 2: the direct comparison that confirms the change
    assert site.run_ids == (1, 2)
    assert all(t.metric == t.history.metric for t in site.trends)
    assert Site((), (), 0, 0.02).run_ids == ()


def test_what_a_publish_did_as_json(store: Path) -> None:
    site = read_site(store)
    done = Published(
        "site", ("index.html", "run-2.html"), ("run-1.html",), site, removed=("run-9.html",)
    )
    assert done.to_json() == {
        "folder": "site",
        "written": ["index.html", "run-2.html"],
        "unchanged": ["run-1.html"],
        "trends": len(site.trends),
        "runs": 2,
        "removed": ["run-9.html"],
        "analysed": 0,
        "pages_analysed": 0,
    }
