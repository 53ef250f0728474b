"""Terminal views of what the machine offers: `perflab events` and `perflab doctor`."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from perflab.records.checks import (
    NO_PMU_FIX,
    Check,
    Countable,
    DoctorReport,
    EventInfo,
    EventSearch,
    Status,
)
from perflab.store.health import StoreHealth, describe_runs

_STATUS_STYLES = {
    Status.OK: "green",
    Status.WARNING: "yellow",
    Status.MISSING: "red",
    Status.INFO: "dim",
}
_COUNTABLE_STYLES = {Countable.YES: "green", Countable.NO: "red", Countable.UNTRIED: "dim"}


def render_event_search(search: EventSearch, console: Console) -> None:
    reason = search.nothing_found_because
    if reason is not None:
        console.print(f"no perf event matches {search.query!r}: {reason}", soft_wrap=True)
        console.print(Text(f"hint: {NO_PMU_FIX}", style="dim"), soft_wrap=True)
        return
    render_events(search.events, search.query, console)


def render_events(events: Sequence[EventInfo], query: str, console: Console) -> None:
    """The perf events matching `query` as a terminal table, with whether each is countable here."""
    if not events:
        console.print(f"no perf event matches {query!r}")
        return
    table = Table(title=f"perf events matching {query!r}", title_justify="left")
    table.add_column("event")
    table.add_column("kind")
    table.add_column("countable here")
    table.add_column("description", overflow="fold")
    for event in events:
        countable = Text(event.countable.value, style=_COUNTABLE_STYLES[event.countable])
        if event.reason:
            countable.append(f" ({event.reason})", style="dim")
        table.add_row(event.name, event.kind, countable, event.description)
    console.print(table)


def _check_rows(table: Table, checks: Sequence[Check]) -> None:
    for check in checks:
        table.add_row(
            check.name,
            Text(check.status.value, style=_STATUS_STYLES[check.status]),
            check.detail,
            check.fix or "",
        )


def render_doctor(report: DoctorReport, console: Console) -> None:
    """`perflab doctor`'s findings as terminal tables: the lenses, then the machine's noise and
    fixes."""
    lenses = Table(title="lenses", title_justify="left")
    for column in ("lens", "works here", "detail", "to get more"):
        lenses.add_column(column, overflow="fold")
    for lens in report.lenses:
        lenses.add_row(
            lens.lens.value,
            Text("yes" if lens.available else "no", style="green" if lens.available else "red"),
            lens.detail,
            lens.fix or "",
        )
    console.print(lenses)
    for title, checks in (("tools", report.tools), ("noise sources", report.noise)):
        table = Table(title=title, title_justify="left")
        for column in ("check", "status", "detail", "fix"):
            table.add_column(column, overflow="fold")
        _check_rows(table, checks)
        console.print(table)


def render_store_health(health: StoreHealth, console: Console) -> None:
    """A store's health check as a terminal table."""
    table = Table(title=f"store {health.path}", title_justify="left", show_header=False)
    table.add_column("check")
    table.add_column("result", overflow="fold")
    state = Text("damaged", style="red") if health.damaged else Text("intact", style="green")
    table.add_row("state", state)
    table.add_row("size", f"{health.size_bytes:,} bytes")
    table.add_row("schema version", str(health.schema_version))
    table.add_row("SQLite check", health.check)
    for problem in health.problems:
        table.add_row("problem", Text(problem, style="red"))
    table.add_row("runs", str(len(health.run_ids)))
    if health.damaged:
        table.add_row("readable runs", describe_runs(health.readable_runs))
        table.add_row("unreadable runs", describe_runs(health.unreadable_runs))
    for status, count in sorted(health.statuses.items()):
        table.add_row(f"  {status}", str(count))
    table.add_row("new runs", health.writable and f"cannot be written: {health.writable}" or "ok")
    console.print(table)
    if health.damaged:
        console.print(
            Text(
                "hint: keep a copy of the file; `sqlite3 FILE .recover > dump.sql` salvages what "
                "SQLite can still read; runs listed readable can be shown and compared",
                style="dim",
            )
        )
