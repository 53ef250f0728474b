"""`perflab history`'s handler: the options -> `perflab.workflows.history` -> the series and
its change points on the terminal, its reports, and the exit status."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from perflab import api
from perflab.bisection.threshold import parse_threshold
from perflab.cli.exits import EXIT_NOT_MEASURED, EXIT_OK
from perflab.cli.reports import HtmlPage, Renderers, write_reports
from perflab.cli.workflows.history import WORKFLOW
from perflab.cli.workflows.shared import (
    benchmarked_from,
    refuse_run_only,
    writes_to_stdout,
)
from perflab.records.workflow_results import HistoryResult, SuiteHistory
from perflab.report.escape import terminal
from perflab.report.workflow_formats import (
    history_html,
    history_markdown,
    render_history,
    suite_history_headline,
    suite_history_html,
    suite_history_markdown,
)
from perflab.workflows import Benchmarked, WorkflowServices, history_with, suite_history_with

if TYPE_CHECKING:
    from perflab.cli.options import OutputOptions, RunOptions


def handle(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    """`perflab history`: a benchmark over a range of commits, with its change points; the exit
    status."""
    refuse_run_only(options, WORKFLOW)
    threshold = parse_threshold(args.threshold)
    benchmark = benchmarked_from(args, options)
    output = options.output
    if benchmark.suite is not None:
        return _suite_history(args, benchmark, threshold, output, out, err)
    found = history_with(
        args.range_text,
        benchmark=benchmark,
        services=_services(output, err),
        every=args.every,
        threshold=threshold,
    )

    def html(page: HtmlPage) -> str:
        # on standard output (-) there is no folder for the change points' own pages
        links = {} if page.on_stdout else _change_pages(found, page, output, {})
        return history_html(found, change_links=links)

    renderers = Renderers(
        json=lambda: _json(found), markdown=lambda: history_markdown(found), html=html
    )
    write_reports(output, renderers, err)
    to_stdout = writes_to_stdout(output)
    if not output.quiet and not to_stdout:
        render_history(found, out)
    return _history_status(found, err)


def _services(output: OutputOptions, err: Console) -> WorkflowServices:
    """The workflow's services, saying each part of the history and each change point's direct
    comparison before it is measured (a long history in a CI log is otherwise silent until its
    answer); -q says nothing."""
    if output.quiet:
        return WorkflowServices()

    def said(done: int, part: int, wanted: int, held: int) -> None:
        from_store = f"; {held} read from the store" if held and not done else ""
        line = f"measuring commits {done + 1}-{done + part} of {wanted}{from_store}"
        err.print(Text("perflab: ") + terminal(line), highlight=False)

    def confirming(before: str, after: str) -> None:
        line = f"confirming a change point: {before[:10]} against {after[:10]}, directly"
        err.print(Text("perflab: ") + terminal(line), highlight=False)

    return WorkflowServices(on_part=said, on_confirm=confirming)


def _suite_history(
    args: argparse.Namespace,
    benchmark: Benchmarked,
    threshold: float,
    output: OutputOptions,
    out: Console,
    err: Console,
) -> int:
    """A suite's history: each benchmark's series, then one line naming those that changed."""
    found = suite_history_with(
        args.range_text,
        benchmark=benchmark,
        services=_services(output, err),
        every=args.every,
        threshold=threshold,
    )

    def html(page: HtmlPage) -> str:
        by_run: dict[int, str] = {}  # a run's change page, shared by the benchmarks it changed
        links = (
            {}
            if page.on_stdout
            else {str(s.benchmark): _change_pages(s, page, output, by_run) for s in found.series}
        )
        return suite_history_html(found, change_links=links)

    renderers = Renderers(
        json=lambda: _json(found), markdown=lambda: suite_history_markdown(found), html=html
    )
    write_reports(output, renderers, err)
    to_stdout = writes_to_stdout(output)
    if not output.quiet and not to_stdout:
        for series in found.series:
            out.print(Text(f"benchmark {series.benchmark}", style="bold"), highlight=False)
            render_history(series, out)
    err.print(
        Text("perflab history: ", style="bold") + terminal(suite_history_headline(found)),
        highlight=False,
    )
    return max(_history_status(series, err) for series in found.series)


def _json(found: HistoryResult | SuiteHistory) -> str:
    return json.dumps(found.to_json(), indent=2) + "\n"


def _change_pages(
    found: HistoryResult, page: HtmlPage, output: OutputOptions, by_run: dict[int, str]
) -> dict[int, str]:
    """Writes each change point's direct comparison as a report beside `page`, once per run
    (`by_run`: the run's report written already, as a suite's benchmarks that change at the
    same commits share their comparison); a change point's index -> its report's file."""
    from perflab.report.html import render_html

    links: dict[int, str] = {}
    for change in found.changes:
        report = change.result
        if report is None and change.run_id is not None and output.store is not None:
            report = api.show(change.run_id, output.store)
        if report is None:
            continue
        if report.run_id not in by_run:
            name = f"{page.path.stem}-change{len(by_run) + 1}.html"
            by_run[report.run_id] = page.beside(name, render_html(report))
        links[change.index] = by_run[report.run_id]
    return links


def _history_status(found: HistoryResult, err: Console) -> int:
    """3 when some commits could not be built or measured (each named, with why): the change
    points are among the others, and a script must not read that as a clean history."""
    skipped = [p for p in found.points if p.skipped]
    if not skipped:
        return EXIT_OK
    of = f"{found.benchmark}: " if found.benchmark is not None else ""
    err.print(
        Text(
            f"perflab: {of}{len(skipped)} of {len(found.points)} commits not measured "
            f"(status {EXIT_NOT_MEASURED}); the change points are among the others",
            style="bold red",
        ),
        highlight=False,
    )
    for point in skipped:
        why = point.skipped.splitlines()[0]
        line = terminal(f"{point.commit[:10]} {point.subject}: {why}")
        err.print(Text("perflab:   ") + line, highlight=False)
    return EXIT_NOT_MEASURED
