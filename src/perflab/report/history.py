"""Terminal views of the workflows over a history: a bisection's path and culprit."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perflab.bisect import BisectResult, BisectStep, StepState
from perflab.report.escape import terminal, visible
from perflab.units import format_ratio

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
