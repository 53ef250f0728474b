"""The pages of a published site (`perflab publish`). The front page shows the recent confirmed
change points, then a grid of every benchmark x lens with a small trend; a page per trend shows the
history's answer, its trend linked to each point's run, and a row per commit. A run's page is its
report (`render_html`). Every page is self-contained: inline CSS and SVG, links relative to the
site's folder, names escaped by the templates."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from perflab.records.document import Cell, Paragraph, Section, Style, Table
from perflab.records.published import Site, SiteChange, Trend
from perflab.records.version import __version__
from perflab.records.workflow_results import HistoryChange
from perflab.report.escape import html_text
from perflab.report.workflow_views import (
    CHANGES_CAPTION,
    history_answer,
    per_iteration_text,
    points_table,
    ratio_text,
    trend_figure,
)

SPARK_WIDTH, SPARK_HEIGHT = 160.0, 36.0
# a trend's page lists at most this many commits besides its change points' (a row each)
TABLE_ROWS = 100
FRONT_PAGE = "index.html"


def run_page_name(run_id: int) -> str:
    return f"run-{run_id}.html"


def trend_page_name(trend: Trend) -> str:
    return f"trend-{trend.key}.html"


def _point_links(trend: Trend) -> dict[int, str]:
    return {
        i: run_page_name(p.run_id)
        for i, p in enumerate(trend.history.points)
        if p.run_id is not None
    }


def _change_links(trend: Trend) -> dict[int, str]:
    return {c.index: run_page_name(c.run_id) for c in trend.history.changes if c.run_id is not None}


def trend_section(trend: Trend) -> Section:
    """The history's answer (its change points, each linked to its direct comparison), the
    trend (each point linked to its run), a row per commit."""
    history = trend.history
    links = _change_links(trend)
    figure = trend_figure(history, links, _point_links(trend))
    blocks = (
        *history_answer(history, links),
        *([figure] if figure else []),
        _points_table(trend),
        *(Paragraph(f"info: {note}", Style.MUTED) for note in history.notes),
    )
    title = f"{history.metric} per iteration over {len(history.points)} commits"
    return Section(title, blocks, key="history")


def _points_table(trend: Trend) -> Table:
    """A row per commit; of a long trend, the latest TABLE_ROWS and those either side of each
    change point (the trend above links every point to its run): a page of 500 commits stays
    light, and quick to render for each of a site's trends."""
    points = trend.history.points
    if len(points) <= TABLE_ROWS:
        return points_table(trend.history, _point_links(trend))
    shown = set(range(len(points) - TABLE_ROWS, len(points)))
    shown |= {i for c in trend.history.changes for i in (c.index - 1, c.index)}
    caption = (
        f"the latest {TABLE_ROWS} of {len(points)} commits, and those either side of each "
        "change point; every point of the trend above links to its run"
    )
    return points_table(trend.history, _point_links(trend), shown=shown, caption=caption)


def trend_page(trend: Trend) -> str:
    from perflab.report.html import render_page  # jinja2: loaded only when a page is written

    return render_page(
        f"{trend.benchmark} · {trend.metric}",
        (trend_section(trend),),
        up=(FRONT_PAGE, "every benchmark"),
    )


def headline(site: Site) -> Paragraph:
    """The answer in a line: how many confirmed change points, across how many trends."""
    trends = len(site.trends)
    across = f"beyond {site.threshold:.1%} across {trends} trend{'s' * (trends != 1)}"
    more = (
        f" ({site.unconfirmed} more change point{'s' * (site.unconfirmed != 1)} not confirmed "
        "by a direct comparison: on their trends' pages)"
        if site.unconfirmed
        else ""
    )
    if not site.trends:
        return Paragraph(
            "the store holds no runs of commits: `perflab history` (or bisect, check) measures "
            "them",
            Style.EMPHASIS,
        )
    count = len(site.recent)
    if not count:
        return Paragraph(f"no confirmed change {across}{more}", Style.EMPHASIS)
    return Paragraph(
        f"{count} confirmed change point{'s' * (count != 1)} {across}, newest first{more}",
        Style.EMPHASIS,
    )


def _direction(change: HistoryChange) -> Cell:
    slower = change.series_ratio > 1
    return Cell("slower" if slower else "faster", Style.SLOWER if slower else Style.FASTER)


def _before_after(change: HistoryChange) -> str:
    before, after = change.before, change.after
    values = (before.series_value, after.series_value)
    if values[0] is None or values[1] is None:
        return "-"
    unit = after.unit or before.unit
    return f"{per_iteration_text(values[0], unit)} → {per_iteration_text(values[1], unit)}"


def site_changes_table(recent: Sequence[SiteChange]) -> Table:
    """Each confirmed change point: the commit (linked to its direct comparison), the benchmark
    (linked to its trend), the lens, the values either side, the direct ratio with its CI."""
    rows = tuple(
        (
            Cell(s.change.after.commit[:10], href=_run_link(s.change)),
            # the commit measured before it: the change lies after it, up to the commit (a
            # history every Nth commit measures none of those between)
            Cell(s.change.before.commit[:10]),
            Cell(s.change.after.subject),
            Cell(s.trend.benchmark, href=trend_page_name(s.trend)),
            Cell(str(s.trend.metric)),
            Cell(_before_after(s.change)),
            Cell(ratio_text(s.change.ratio, s.change.ci_low, s.change.ci_high)),
            _direction(s.change),
        )
        for s in recent
    )
    return Table(
        (
            "commit",
            "since",
            "subject",
            "benchmark",
            "lens",
            "before → after",
            "direct [95% CI]",
            "",
        ),
        rows,
        numeric=(False, False, False, False, False, True, True, False),
        caption=SITE_CHANGES_CAPTION,
    )


# the site's change points name the commit measured before each: `git log SINCE..COMMIT`
SITE_CHANGES_CAPTION = (
    CHANGES_CAPTION + "; since: the commit measured before it, so the change is in "
    "`git log SINCE..COMMIT` (one commit where nothing was left unmeasured)"
)


def _run_link(change: HistoryChange) -> str:
    return run_page_name(change.run_id) if change.run_id is not None else ""


def sparkline(trend: Trend) -> str:
    """The trend in a few pixels: its line, each confirmed change point a dot in its
    direction's colour, each candidate no direct comparison confirmed a hollow grey ring."""
    points = [
        (i, v) for i, p in enumerate(trend.history.points) if (v := p.series_value) is not None
    ]
    low = min(v for _, v in points)
    high = max(v for _, v in points)
    span = (high - low) or abs(high) or 1.0
    last = max(len(trend.history.points) - 1, 1)

    def place(index: int, value: float) -> tuple[float, float]:
        x = 3 + (SPARK_WIDTH - 6) * index / last
        y = SPARK_HEIGHT - 4 - (SPARK_HEIGHT - 8) * (value - low) / span
        return x, y

    # a point per pixel column at most (the mean of its values): points beyond the pixels add
    # bytes to the page, multiplied by every trend on it, and nothing to the line
    columns: dict[int, list[tuple[float, float]]] = {}
    for i, v in points:
        x, y = place(i, v)
        columns.setdefault(round(x), []).append((x, y))
    drawn = [
        (sum(x for x, _ in found) / len(found), sum(y for _, y in found) / len(found))
        for found in columns.values()
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in drawn)
    marks = []
    for change in trend.history.changes:
        value = change.after.series_value
        if value is not None:
            x, y = place(change.index, value)
            marks.append(_spark_mark(change, x, y))
    label = html_text(
        f"{trend.benchmark}, {trend.metric}: {len(points)} commits, "
        f"{confirmed_changes(trend)} confirmed change point(s)"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SPARK_WIDTH:.0f}" '
        f'height="{SPARK_HEIGHT:.0f}" role="img" aria-label="{label}"><polyline fill="none" '
        f'stroke="#4e79a7" stroke-width="1.5" points="{line}"/>{"".join(marks)}</svg>'
    )


def _spark_mark(change: HistoryChange, x: float, y: float) -> str:
    if not change.confirmed:
        return (
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="none" stroke="#8c959f" '
            'stroke-width="1"/>'
        )
    colour = "#cf222e" if change.series_ratio > 1 else "#1a7f37"
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'


def confirmed_changes(trend: Trend) -> int:
    """The trend's change points a direct comparison confirmed: what the grid counts (the
    others are candidates, drawn apart on the trend)."""
    return sum(c.confirmed for c in trend.history.changes)


def _latest(trend: Trend) -> str:
    last = trend.history.points[-1]
    value = last.series_value
    return "-" if value is None else per_iteration_text(value, last.unit)


def front_page(site: Site) -> str:
    """The answer first (the recent confirmed change points), then every trend in a grid that
    can be filtered by name, lens and (where the store holds several) machine."""
    from perflab.report.html import section_view, template_environment

    answer: list[Paragraph | Table] = [headline(site)]
    if site.recent:
        answer.append(site_changes_table(site.recent))
    grid = [
        {
            "name": t.benchmark,
            "lens": str(t.metric),
            "href": trend_page_name(t),
            "spark": Markup(sparkline(t)),
            "commits": len(t.history.points),
            "changes": confirmed_changes(t),
            "latest": _latest(t),
            "machines": list(t.machines),
        }
        for t in sorted(site.trends, key=lambda t: (t.benchmark, str(t.metric)))
    ]
    return (
        template_environment()
        .get_template("site.html.j2")
        .render(
            title="perflab: benchmarks over commits",
            version=__version__,
            answer=section_view(Section("recent change points", tuple(answer), key="changes")),
            grid=grid,
            lenses=sorted({row["lens"] for row in grid}),
            machines=sorted({m for t in site.trends for m in t.machines}),
        )
    )
