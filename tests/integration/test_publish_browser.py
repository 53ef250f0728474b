"""A published site opened in a real headless Chromium: the front page loads without a script
error or a fetch, names the change point, and its link resolves to that change point's report;
hostile names stay text in the DOM; the front page and a trend fit 1400 and 720 px windows."""

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


# each SVG label inside its drawing and clear of its neighbours on the same line, the smallest
# label's height on screen, and whether the page is wider than the window (tables scroll inside
# their own box instead)
SITE_LAYOUT = """<script>
(() => {
const texts = [...document.querySelectorAll("svg text")];
const outside = texts.filter((t) => {
  const view = t.ownerSVGElement.viewBox.baseVal, b = t.getBBox();
  return view.width > 0 && (b.x < view.x - 0.5 || b.x + b.width > view.x + view.width + 0.5);
}).map((t) => t.textContent);
const overlapping = [];
for (const a of texts) for (const b of texts) {
  const p = a.getBBox(), q = b.getBBox();
  const sameLine = a.ownerSVGElement === b.ownerSVGElement
    && a.getAttribute("y") === b.getAttribute("y");
  if (a !== b && sameLine && p.x < q.x && p.x + p.width > q.x)
    overlapping.push(a.textContent + " / " + b.textContent);
}
const heights = texts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0);
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify({
  outside, overlapping, smallest: heights.length ? Math.min(...heights) : 99,
  wider: document.documentElement.scrollWidth - window.innerWidth,
});
document.body.append(pre);
})();
</script>"""


def test_the_front_page_and_a_trend_fit_at_1400_and_720_px(
    chromium: str,  # noqa: F811 (the fixture)
    store: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    import html
    import json

    site = tmp_path / "site"
    publish(site, store)
    trend = sorted(site.glob("trend-*.html"))[0]
    for page in (site / "index.html", trend):
        measured = page.with_name(f"measured-{page.name}")
        measured.write_text(page.read_text().replace("</body>", SITE_LAYOUT + "</body>"))
        for width in (1400, 720):
            shown = browse(
                chromium, measured, tmp_path, "--dump-dom", f"--window-size={width},1000"
            )
            (data,) = re.findall(r'<pre id="layout">(.*?)</pre>', shown.stdout, re.S)
            layout = json.loads(html.unescape(data))
            assert layout["outside"] == [] and layout["overlapping"] == [], (page.name, layout)
            assert layout["smallest"] >= 10, (page.name, width, layout)  # readable at 720 too
            assert layout["wider"] <= 1, (page.name, width, layout)
