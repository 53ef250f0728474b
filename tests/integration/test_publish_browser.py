"""A published site opened in a real headless Chromium: the front page loads without a script
error or a fetch, names the change point, and its link resolves to that change point's report;
hostile names stay text in the DOM."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perflab.publish import publish
from tests.support.browser import browse
from tests.support.browser import chromium as chromium  # noqa: F401 (a fixture)
from tests.support.published_runs import COMMITS, SLOW_FROM
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration


def test_the_front_page_loads_and_its_change_point_opens_its_report(
    chromium: str,  # noqa: F811 (the fixture)
    store: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    publish(site, store)
    dom = browse(chromium, site / "index.html", tmp_path, "--dump-dom").stdout
    found = re.search(r'<a href="(run-\d+\.html)">' + COMMITS[SLOW_FROM][0][:10], dom)
    assert found is not None, dom[:3000]
    assert "<b>bold</b>" not in dom and "&lt;b&gt;bold&lt;/b&gt;" in dom
    # the link resolves: a relative name in the site's folder, the comparison's report
    assert "perflab run 2" in (site / found.group(1)).read_text()
