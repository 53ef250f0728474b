"""Terminal views of the workflows over a history: a bisection's path and culprit."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import replace

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perflab.plan.bisect_search import BisectResult, BisectStep, StepState
from perflab.records.document import Table as DocTable
from perflab.records.model import Metric
from perflab.records.results import RunResult
from perflab.records.units import format_ratio
from perflab.records.workflow_results import CheckResult, HistoryChange, HistoryResult
from perflab.report.escape import markdown, terminal, visible

STATE_STYLES = {
    StepState.GOOD: "cyan",
    StepState.BAD: "bold red",
    StepState.SKIPPED: "magenta",
    StepState.INCONCLUSIVE: "yellow",
}


def _ratio(step: BisectStep) -> str:
    outcome = step.outcome
    if outcome.ratio is None:
        return "-"
    low = outcome.ci_low if outcome.ci_low is not None else outcome.ratio
    high = outcome.ci_high if outcome.ci_high is not None else outcome.ratio
    return format_ratio(outcome.ratio, low, high)


def describe_step(step: BisectStep, total: int) -> str:
    """One line per step, said while bisecting."""
    outcome = step.outcome
    ratio = _ratio(step)
    more = f" (measured {step.attempts}x)" if step.attempts > 1 else ""
    why = f": {outcome.reason}" if outcome.reason else ""
    shown = f" {ratio}" if outcome.ratio is not None else ""
    return (
        f"[{step.index + 1}/{total}] {step.commit[:10]} {step.subject}: {outcome.state}"
        f"{shown}{more}{why}"
    )


def render_bisect(result: BisectResult, console: Console) -> None:
    console.print(_bisect_table(result))
    skipped = [s for s in result.steps if s.outcome.state is StepState.SKIPPED]
    for step in skipped:
        console.print(
            terminal(
                f"skipped {step.commit[:10]} {step.subject}: {step.outcome.reason}", "magenta"
            ),
            soft_wrap=True,
        )
    summary = (
        f"{result.measured_commits} of {len(result.line) + 1} commits measured "
        f"({len(result.steps)} steps) in {result.seconds:.0f} s"
    )
    if result.culprit is not None:
        console.print(
            Text("first bad commit: ", style="bold red")
            + terminal(f"{result.culprit.commit[:10]} {result.culprit.subject}"),
        )
    elif result.candidates:
        console.print(
            Text("the first bad commit is one of: ", style="bold yellow")
            + terminal(", ".join(f"{c.commit[:10]} {c.subject}" for c in result.candidates))
        )
    if result.stopped:
        console.print(Text(visible(result.stopped), style="yellow"))
    console.print(summary, highlight=False)
    _print_notes(result.notes, console)
    if result.evidence_run is not None:
        console.print(
            f"evidence: the culprit against its first parent is run {result.evidence_run}",
            highlight=False,
        )


def _bisect_table(result: BisectResult) -> Table:
    table = Table(
        title=f"bisect: {result.metric} against GOOD {result.good.commit[:10]}, threshold "
        f"{result.threshold:.1%}",
        title_justify="left",
    )
    for column in ("#", "commit", "subject", "ratio vs GOOD [95% CI]", "step", "run"):
        table.add_column(column, justify="right" if column in ("#", "run") else "left")
    for number, step in enumerate(result.steps, 1):
        outcome = step.outcome
        state = str(outcome.state) + (f" ({step.attempts}x)" if step.attempts > 1 else "")
        table.add_row(
            str(number),
            step.commit[:10],
            terminal(step.subject),
            _ratio(step),
            Text(state, style=STATE_STYLES[outcome.state]),
            _run_id(outcome.run_id),
        )
    return table


def _run_id(run_id: int | None) -> str:
    return str(run_id) if run_id is not None else ""


def _print_notes(notes: Sequence[str], console: Console) -> None:
    for note in notes:
        console.print(Text("info: ", style="blue") + terminal(note), soft_wrap=True)


def check_markdown(check: CheckResult, *, report_link: str | None = None) -> str:
    """The pull-request comment: the verdict, the table, the top explanation, the report."""
    result = check.result
    outcome = check.outcome
    headline = {
        StepState.BAD: f"❌ regression: more than {check.threshold:.1%} worse",
        StepState.GOOD: f"✅ no regression beyond {check.threshold:.1%}",
        StepState.INCONCLUSIVE: f"⚠️ inconclusive at {check.threshold:.1%}: not failed",
        StepState.SKIPPED: "⚠️ not measured",
    }[outcome.state]
    lines = [
        f"### perflab check: {headline}",
        "",
        f"`{check.head.commit[:10]}` {_md(check.head.subject)}"
        + (" with uncommitted changes" if check.working_tree else "")
        + " against "
        f"`{check.base.commit[:10]}` {_md(check.base.subject)} (base {_code(check.base_ref)}), "
        f"{check.metric} lens, run {result.run_id}.",
        "",
        "| benchmark | metric | base | head | ratio [95% CI] | verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    for c in result.comparisons:
        if c.metric is not check.metric or c.event is not None:
            continue
        lines.append(
            f"| {_md(c.benchmark)} | {c.metric} | {_value(c.baseline_value, c.unit)} | "
            f"{_value(c.variant_value, c.unit)} | {format_ratio(c.ratio, c.ci_low, c.ci_high)} | "
            f"{c.verdict} |"
        )
    lines.append("")
    explanation = _top_explanation(result, check.metric)
    if explanation:
        lines += ["**Where it changed** (the largest changes first):", "", *explanation]
    if result.failures:
        lines += [f"- not measured: {_md(f.message)}" for f in result.failures] + [""]
    for note in check.notes:
        lines += [f"_{_md(note)}_", ""]
    if report_link:
        lines += [f"[The full report (plots, every lens's tables)]({report_link})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _code(text: str) -> str:
    """A name as a code span: shown as it is, so nothing in it is escaped but backticks."""
    return "`" + visible(text).replace("`", "'") + "`"


def _md(text: str) -> str:
    return markdown(text)  # escapes Markdown syntax, table pipes included


def _value(value: float, unit: str) -> str:
    if unit in ("instructions", "count", "") or value >= 1000:
        return f"{value:,.0f}" + (f" {unit}" if unit not in ("instructions", "") else "")
    return f"{value:.4g} {unit}"


def _top_explanation(result: RunResult, metric: Metric, rows: int = 5) -> list[str]:
    """The first table of the metric's explanations (per function, per symbol ...), cut."""
    from perflab.report.markdown import table_lines

    for section in result.sections:
        if section.key != metric.value:
            continue
        for sub in section.subsections:
            for block in sub.blocks:
                if isinstance(block, DocTable) and block.rows:
                    shown = replace(
                        block,
                        rows=block.rows[:rows],
                        omitted_rows=block.omitted_rows + max(0, len(block.rows) - rows),
                    )
                    return table_lines(shown)
    return []


def render_history(result: HistoryResult, console: Console) -> None:
    console.print(_history_table(result))
    for change in result.changes:
        _print_change(change, console)
    if not result.changes:
        console.print(f"no change point beyond {result.threshold:.1%}", highlight=False)
    reused = sum(p.reused for p in result.points)
    skipped = [p for p in result.points if p.value is None]
    console.print(
        f"{len(result.points)} commits: {result.measured_now} measured now, {reused} reused, "
        f"{len(skipped)} skipped, in {result.seconds:.0f} s",
        highlight=False,
    )
    _print_notes(result.notes, console)


def _history_table(result: HistoryResult) -> Table:
    starts = {c.index: c for c in result.changes}
    table = Table(
        title=f"history: {result.range_text}, {result.metric} per iteration", title_justify="left"
    )
    nodes = any(p.node for p in result.points)
    normalised = any(p.normalised_value is not None for p in result.points)
    columns = ["commit", "subject", "value", *(["as measured"] * normalised), "", "run"]
    columns += ["node"] * nodes
    for column in columns:
        table.add_column(column, justify="right" if column in ("value", "run") else "left")
    for i, point in enumerate(result.points):
        if point.value is None:
            value, how = Text("-"), Text(f"skipped: {visible(point.skipped)}", style="magenta")
        else:
            value = Text(_value(point.series_value or point.value, point.unit))
            how = Text("reused" if point.reused else "measured", style="dim")
        measured = [_value(point.value, point.unit) if point.value is not None else "-"]
        change = starts.get(i)
        if change is not None:
            how = Text(f"change {change.series_ratio:.3f}", style="bold red" if (
                change.series_ratio > 1) else "bold green")  # fmt: skip
        table.add_row(
            point.commit[:10],
            terminal(point.subject),
            value,
            *(measured * normalised),
            how,
            _run_id(point.run_id),
            *([terminal(point.node)] * nodes),
        )
    return table


def _direct(change: HistoryChange) -> str:
    """The direct comparison of the commits either side of a change point."""
    if change.ratio is None:
        return "not measured"
    return format_ratio(change.ratio, change.ci_low or change.ratio, change.ci_high or change.ratio)


def _print_change(change: HistoryChange, console: Console) -> None:
    state = "confirmed" if change.confirmed else "not confirmed"
    console.print(
        Text(f"change point at {change.after.commit[:10]} ", style="bold")
        + terminal(
            f"{change.after.subject}: the level moved {change.series_ratio:.3f}x; "
            f"{change.before.commit[:10]} against it directly: {_direct(change)}, {state} "
            f"(run {change.run_id}{', reused' if change.reused else ''})"
        ),
        soft_wrap=True,
    )
    if change.unmeasured_between:
        console.print(
            terminal(
                f"  {change.unmeasured_between} commit(s) between them were not measured: "
                f"perflab bisect {change.before.commit[:10]} {change.after.commit[:10]} "
                "(with the same benchmark options) finds the commit"
            ),
            soft_wrap=True,
        )


def history_html(result: HistoryResult, *, change_links: dict[int, str]) -> str:
    """A self-contained page: the trend as an SVG line, change points as vertical lines, each
    linked to its direct comparison's report."""
    skipped = "".join(
        f"<li><code>{p.commit[:10]}</code> {html.escape(p.subject)}: {html.escape(p.skipped)}</li>"
        for p in result.points
        if p.value is None
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>perflab history {html.escape(result.range_text)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:.2em .6em;"
        "text-align:left}</style></head><body>"
        f"<h1>History of {html.escape(result.range_text)}</h1>"
        f"<p>{html.escape(str(result.metric))} per iteration, one point per commit of the "
        "first-parent line; dashed lines are change points (click one for its comparison).</p>"
        + "".join(f"<p>{html.escape(note)}</p>" for note in result.notes)
        + _trend_svg(result, change_links)
        + "<h2>Change points</h2><table><tr><th>commit</th><th>subject</th><th>level ratio</th>"
        "<th>direct comparison</th><th></th><th></th></tr>"
        + "".join(_change_row(change, change_links.get(change.index)) for change in result.changes)
        + "</table>"
        + (f"<h2>Skipped</h2><ul>{skipped}</ul>" if skipped else "")
        + "</body></html>\n"
    )


def _trend_svg(result: HistoryResult, change_links: dict[int, str]) -> str:
    """The measured points as a line over the commits, the change points as dashed lines."""
    valued = [(i, p) for i, p in enumerate(result.points) if p.value is not None]
    width, height, margin = 900, 320, 60
    values = [p.series_value or 0.0 for _, p in valued]
    low, high = min(values), max(values)
    span = (high - low) or max(high * 0.05, 1.0)
    low, high = low - span * 0.1, high + span * 0.1
    count = max(len(result.points) - 1, 1)

    def x(i: int) -> float:
        return margin + (width - 2 * margin) * i / count

    def y(v: float) -> float:
        return height - margin - (height - 2 * margin) * (v - low) / (high - low)

    line = " ".join(f"{x(i):.1f},{y(p.series_value or 0.0):.1f}" for i, p in valued)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(str(result.metric))} per commit">',
        f'<line x1="{margin}" y1="{height - margin}" x2="{width - margin}" '
        f'y2="{height - margin}" stroke="#999"/>',
        f'<text x="{margin}" y="{margin - 20}" font-size="12">'
        f"{html.escape(_value(high, valued[0][1].unit))}</text>",
        f'<text x="{margin}" y="{height - margin + 30}" font-size="12">'
        f"{html.escape(_value(low, valued[0][1].unit))}</text>",
    ]
    for change in result.changes:
        href = change_links.get(change.index)
        colour = "#c0392b" if change.series_ratio > 1 else "#27ae60"
        mark = (
            f'<line x1="{x(change.index):.1f}" y1="{margin}" x2="{x(change.index):.1f}" '
            f'y2="{height - margin}" stroke="{colour}" stroke-dasharray="4 3" stroke-width="2">'
            f"<title>{html.escape(change.after.subject)}: {change.series_ratio:.3f}x"
            "</title></line>"
        )
        parts.append(f'<a href="{html.escape(href)}">{mark}</a>' if href else mark)
    parts.append(f'<polyline fill="none" stroke="#2c3e50" stroke-width="2" points="{line}"/>')
    for i, point in valued:
        parts.append(
            f'<circle cx="{x(i):.1f}" cy="{y(point.series_value or 0.0):.1f}" r="3" '
            'fill="#2c3e50">'
            f"<title>{point.commit[:10]} {html.escape(point.subject)}: "
            f"{html.escape(_value(point.series_value or 0.0, point.unit))}"
            f"{html.escape(f' on {point.node}' if point.node else '')}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _change_row(change: HistoryChange, href: str | None) -> str:
    link = f'<a href="{html.escape(href)}">run {change.run_id}</a>' if href else (
        f"run {change.run_id}")  # fmt: skip
    return (
        f"<tr><td><code>{change.after.commit[:10]}</code></td>"
        f"<td>{html.escape(change.after.subject)}</td>"
        f"<td>{change.series_ratio:.3f}</td><td>{html.escape(_direct(change))}</td>"
        f"<td>{'confirmed' if change.confirmed else 'not confirmed'}</td><td>{link}</td></tr>"
    )
