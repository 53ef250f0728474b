"""Terminal views of the workflows over a history: a bisection's path and culprit."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perflab.bisect import BisectResult, BisectStep, StepState
from perflab.document import Table as DocTable
from perflab.model import Metric
from perflab.report.escape import markdown, terminal, visible
from perflab.results import RunResult
from perflab.units import format_ratio
from perflab.workflows import CheckResult

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
    return (
        f"[{step.index + 1}/{total}] {step.commit[:10]} {step.subject}: {outcome.state} "
        f"{ratio}{more}{why}"
    )


def render_bisect(result: BisectResult, console: Console) -> None:
    table = Table(
        title=f"bisect: {result.metric} against GOOD {result.good.commit[:10]}, threshold "
        f"{result.threshold:.1%}",
        title_justify="left",
    )
    for column in ("#", "commit", "subject", "ratio vs GOOD [95% CI]", "step", "run"):
        table.add_column(column, justify="right" if column in ("#", "run") else "left")
    for number, step in enumerate(result.steps, 1):
        outcome = step.outcome
        ratio = _ratio(step)
        state = str(outcome.state) + (f" ({step.attempts}x)" if step.attempts > 1 else "")
        table.add_row(
            str(number),
            step.commit[:10],
            terminal(step.subject),
            ratio,
            Text(state, style=STATE_STYLES[outcome.state]),
            str(outcome.run_id) if outcome.run_id is not None else "",
        )
    console.print(table)
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
    for note in result.notes:
        console.print(Text("info: ", style="blue") + terminal(note), soft_wrap=True)
    if result.evidence_run is not None:
        console.print(
            f"evidence: the culprit against its first parent is run {result.evidence_run}",
            highlight=False,
        )


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
        f"`{check.head.commit[:10]}` {_md(check.head.subject)} against "
        f"`{check.base.commit[:10]}` {_md(check.base.subject)} (base `{_md(check.base_ref)}`), "
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


def _md(text: str) -> str:
    return markdown(text).replace("|", "\\|")


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
