"""Terminal views of git provenance, stacks and matrices, and of the build cache."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from perflab.git.cache import CacheEntry
from perflab.records.model import Comparison, Verdict
from perflab.records.results import Interaction, InteractionVerdict, RunResult, StackSummary
from perflab.report.escape import terminal
from perflab.report.units import format_ratio

INTERACTION_STYLES = {
    InteractionVerdict.NONE: "cyan",
    InteractionVerdict.BETTER_ON_BASE: "bold green",
    InteractionVerdict.WORSE_ON_BASE: "bold red",
    InteractionVerdict.INCONCLUSIVE: "yellow",
}
_VERDICT_STYLES = {
    Verdict.FASTER: "bold green",
    Verdict.SLOWER: "bold red",
    Verdict.EQUIVALENT: "cyan",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.INVALID: "bold magenta",
}


def _r(value: float) -> str:
    return format_ratio(value, value, value)


def _what(benchmark: str, metric: str, event: str | None) -> str:
    return f"{benchmark}, {metric}" + (f" {event}" if event else "")


def provenance_table(result: RunResult) -> Table | None:
    rows = [
        (name, info["provenance"])
        for name, info in result.variant_info.items()
        if isinstance(info.get("provenance"), dict) and "commit" in info["provenance"]
    ]
    if not rows:
        return None
    table = Table(title="provenance", title_justify="left")
    for column in ("variant", "ref", "commit", "tree", "changes", "build", "subject"):
        table.add_column(column)
    order = {v.name: i for i, v in enumerate(result.experiment.variants)}
    for name, prov in sorted(rows, key=lambda row: order.get(row[0], 0)):
        changes = ", ".join(c.get("name", "?") for c in prov.get("changes", []))
        build = str(prov.get("build") or "")
        if prov.get("cached"):
            build += " (cached)"
        table.add_row(
            *(
                terminal(cell)
                for cell in (
                    name,
                    _short_ref(str(prov.get("ref", ""))),
                    str(prov.get("commit", ""))[:10],
                    str(prov.get("tree", ""))[:10],
                    changes,
                    build,
                    str(prov.get("subject", "")),
                )
            )
        )
    return table


def _short_ref(ref: str) -> str:
    """A full commit id as git shows it short; names as they are."""
    is_sha = len(ref) == 40 and all(c in "0123456789abcdef" for c in ref)
    return ref[:10] if is_sha else ref


def stack_table(summary: StackSummary) -> Table:
    table = Table(
        title=f"stack: {_what(summary.benchmark, summary.metric.value, summary.event)}",
        title_justify="left",
    )
    for column in ("step", "ratio [95% CI]", "verdict"):
        table.add_column(column)
    for step in summary.steps:
        table.add_row(*_step_row(step))
    table.add_row(*_step_row(summary.whole, label=f"whole: {summary.whole.variant} vs base"))
    product = summary.product
    table.add_row(
        terminal("steps multiplied"),
        terminal(format_ratio(product.ratio, product.ci_low, product.ci_high)),
        terminal(
            "adds up to the whole" if summary.consistent else "does NOT add up to the whole",
            style="cyan" if summary.consistent else "bold yellow",
        ),
    )
    return table


def _step_row(c: Comparison, label: str | None = None) -> list[Text]:
    return [
        terminal(label or f"{c.variant} vs {c.baseline}"),
        terminal(format_ratio(c.ratio, c.ci_low, c.ci_high)),
        terminal(c.verdict.value, style=_VERDICT_STYLES[c.verdict]),
    ]


def interaction_table(interactions: Sequence[Interaction]) -> Table:
    table = Table(title="interactions (a change's ratio on base / on reference base)")
    for column in ("benchmark, metric", "change", "on base", "on reference", "interaction [95% CI]",
                   "verdict"):  # fmt: skip
        table.add_column(column)
    for i in interactions:
        table.add_row(
            terminal(_what(i.benchmark, i.metric.value, i.event)),
            terminal(i.change),
            terminal(f"{i.base}: {_r(i.on_base.ratio)} ")
            + terminal(i.on_base.verdict.value, style=_VERDICT_STYLES[i.on_base.verdict]),
            terminal(f"{i.reference_base}: {_r(i.on_reference.ratio)} ")
            + terminal(i.on_reference.verdict.value, style=_VERDICT_STYLES[i.on_reference.verdict]),
            terminal(format_ratio(i.ratio, i.ci_low, i.ci_high)),
            terminal(i.verdict.value, style=INTERACTION_STYLES[i.verdict]),
        )
    return table


def change_views(result: RunResult) -> Iterator[RenderableType]:
    """What the terminal report adds for git variants, stacks and matrices."""
    table = provenance_table(result)
    if table is not None:
        yield table
    for summary in result.stacks:
        yield stack_table(summary)
    if result.interactions:
        yield interaction_table(result.interactions)


def render_cache_entries(entries: Sequence[CacheEntry], console: Any) -> None:
    if not entries:
        console.print("the build cache is empty")
        return
    table = Table(title="cached checkouts and builds", title_justify="left")
    for column in ("key", "ref", "commit", "tree", "changes", "build", "status", "path"):
        table.add_column(column)
    for e in entries:
        table.add_row(
            *(
                terminal(cell)
                for cell in (
                    e.key[:12],
                    _short_ref(e.ref),
                    e.commit[:10],
                    e.tree[:10],
                    ", ".join(e.changes),
                    e.build or "",
                    e.status,
                    str(e.path),
                )
            )
        )
    console.print(table)
