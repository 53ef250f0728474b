"""The terminal report (rich): one table per metric, then what differs and what to distrust."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from perflab.model import Comparison, Metric, Severity, Verdict
from perflab.report.lens_details import lens_details
from perflab.report.units import format_ratio, format_seconds, format_value
from perflab.results import RunResult
from perflab.store import RunSummary

VERDICT_STYLES = {
    Verdict.FASTER: "bold green",
    Verdict.SLOWER: "bold red",
    Verdict.EQUIVALENT: "cyan",
    Verdict.INCONCLUSIVE: "yellow",
}


def verdict_text(comparison: Comparison, *, with_time_to_decide: bool = True) -> Text:
    text = Text(comparison.verdict.value, style=VERDICT_STYLES[comparison.verdict])
    if not with_time_to_decide:  # stored runs cannot be measured longer
        return text
    extra = (
        comparison.details.to_json().get("extra_seconds_to_decide") if comparison.details else None
    )
    if comparison.verdict is Verdict.INCONCLUSIVE and isinstance(extra, int | float):
        text.append(f" (~{format_seconds(extra)} more)", style="dim")
    return text


def comparison_table(
    metric: Metric, comparisons: Sequence[Comparison], *, cross_run: bool = False
) -> Table:
    title = f"{metric.value}"
    table = Table(title=title, title_justify="left", title_style="bold")
    table.add_column("benchmark")
    table.add_column("variant")
    with_event = any(c.event for c in comparisons)  # counters, and any lens measuring several
    if with_event:
        table.add_column("event")
    table.add_column("baseline", justify="right")
    table.add_column("variant", justify="right")
    table.add_column("ratio [95% CI]", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for c in comparisons:
        spread = _spreads(c)
        row = [c.benchmark, f"{c.variant} vs {c.baseline}"]
        if with_event:
            row.append(c.event or "")
        row += [
            format_value(c.baseline_value, c.unit) + spread[0],
            format_value(c.variant_value, c.unit) + spread[1],
            format_ratio(c.ratio, c.ci_low, c.ci_high),
        ]
        table.add_row(
            *(Text(cell) for cell in row), verdict_text(c, with_time_to_decide=not cross_run)
        )
    return table


def _spreads(comparison: Comparison) -> tuple[str, str]:
    if comparison.details is None:
        return "", ""
    details = comparison.details.to_json()
    base, var = details.get("baseline_spread"), details.get("variant_spread")
    if isinstance(base, float) and isinstance(var, float):
        return f" ±{base:.1%}", f" ±{var:.1%}"
    return "", ""


def render_terminal(result: RunResult, console: Console) -> None:
    machine = result.machine
    header = Text()
    header.append(f"run {result.run_id}", style="bold")
    header.append(f"  {result.status.value}  {result.created_at}  ")
    pinned = machine.get("pinned_cpu")
    header.append(f"{machine.get('cpu_model', '?')}, ")
    header.append(f"pinned to CPU {pinned}" if pinned is not None else "not pinned (--no-pin)")
    console.print(header)
    if result.error and not any(n.message.startswith("failed:") for n in result.notes):
        console.print(Text(f"error: {result.error}", style="red"))
    by_metric: dict[Metric, list[Comparison]] = {}
    for comparison in result.comparisons:
        by_metric.setdefault(comparison.metric, []).append(comparison)
    for metric, comparisons in by_metric.items():
        console.print(comparison_table(metric, comparisons, cross_run=result.cross_run))
    for renderable in lens_details(result.comparisons):
        console.print(renderable)
    if not result.comparisons:
        console.print(Text("no comparisons (nothing was measured)", style="yellow"))
    if result.differences:
        console.print(
            Text("variants differ in: ", style="bold") + Text("; ".join(result.differences))
        )
    elif len(result.experiment.variants) > 1 and not result.cross_run:
        console.print(Text("variants are identical (an A/A test)", style="bold"))
    notes = list(result.notes)
    for index, note in enumerate(notes):
        warning = note.severity is Severity.WARNING
        where = ", ".join(x for x in (note.benchmark, note.variant) if x)
        line = Text(f"{note.severity.value}: ", style="yellow" if warning else "dim")
        line.append(f"[{where}] " if where else "", style="" if warning else "dim")
        line.append(note.message, style="" if warning else "dim")
        following = notes[index + 1] if index + 1 < len(notes) else None
        # a hint shared by several notes in a row (six unsupported events ...) is said once
        if note.hint and warning and (following is None or following.hint != note.hint):
            line.append(f"\n  hint: {note.hint}", style="dim")
        console.print(line)


def render_run_list(runs: Sequence[RunSummary], console: Console) -> None:
    table = Table(title="stored runs", title_justify="left")
    for column in ("run", "created", "status", "benchmarks", "variants", "metrics", "samples"):
        table.add_column(column)
    for run in runs:
        cells = (
            str(run.run_id),
            run.created_at,
            run.status.value,
            _shorten(", ".join(run.benchmarks)),
            ", ".join(run.variants),
            ", ".join(run.metrics),
            str(run.n_samples),
        )
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table if runs else Group(Text("the store holds no runs yet")))


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
