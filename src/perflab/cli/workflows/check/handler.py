"""`perflab check`'s handler: the options -> `perflab.workflows.check` -> the verdict's one
line, the pull-request comment and reports, and the exit status."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rich.console import Console
from rich.text import Text

from perflab.bisection.threshold import parse_threshold
from perflab.cli.exits import EXIT_OK, EXIT_REGRESSION
from perflab.cli.reports import HtmlPage, Renderers, on_stdout, write_reports
from perflab.cli.workflows.check import WORKFLOW
from perflab.cli.workflows.shared import (
    benchmarked_from,
    refuse_run_only,
    writes_to_stdout,
)
from perflab.records.bisect import StepState
from perflab.records.errors import ConfigError, PerflabError
from perflab.records.workflow_results import CheckResult
from perflab.report.escape import terminal
from perflab.report.json_report import render_json
from perflab.report.terminal import render_terminal
from perflab.report.workflow_formats import check_line, check_markdown
from perflab.workflows import WorkflowServices, check_with

if TYPE_CHECKING:
    from perflab.cli.options import OutputOptions, RunOptions


def handle(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    """`perflab check`: the head against its base ref, judged by the threshold, with the report and
    the pull-request comment; the exit status."""
    refuse_run_only(options, WORKFLOW)
    threshold = parse_threshold(args.threshold)
    benchmark = benchmarked_from(args, options)
    output = options.output
    report_link = checked_link(args.report_link) if args.report_link is not None else None
    checked = check_with(
        args.base_ref,
        benchmark=benchmark,
        services=WorkflowServices(),
        head=args.head,
        threshold=threshold,
        merge_base=args.merge_base,
    )
    result = checked.result
    _write_check_reports(checked, output, report_link, err)
    to_stdout = writes_to_stdout(output)
    if not output.quiet and not to_stdout:
        view(checked, out)
    if not output.quiet:
        for note in checked.notes:
            err.print(Text("perflab: ") + terminal(note), highlight=False)
    failed = checked.outcome.state in (StepState.BAD, StepState.SKIPPED)
    style = "bold red" if failed else "bold green"
    # the run's notes above hold each failure in full (with its output): named, not repeated
    above = not output.quiet and not to_stdout
    verdict = check_line(checked, failures_above=above)
    err.print(Text("perflab check: ", style=style) + terminal(verdict), highlight=False)
    failures = result.failures
    if benchmark.suite is not None:
        failures = _failing_at_head(checked, err)
    if failures:
        if output.quiet or to_stdout:  # else the run's notes above said each one
            for failure in failures:
                text = terminal(str(failure), keep_newlines=True)
                err.print(Text("perflab: ", style="bold red") + text, highlight=False)
        return max(f.exit_code for f in failures)
    return EXIT_REGRESSION if checked.regression else EXIT_OK


def _failing_at_head(checked: CheckResult, err: Console) -> tuple[PerflabError, ...]:
    """A suite's failures that fail the check: a benchmark that fails at the base alone is
    one the change adds (or mends), so it is named and not compared, and does not fail it."""
    failures = checked.result.failures
    at_head = {f.benchmark for f in failures if f.variant != "base"}
    added = sorted({f.benchmark or "?" for f in failures if f.variant == "base"} - at_head)
    if added:
        err.print(
            Text("perflab: ")
            + terminal(
                f"{len(added)} benchmark{'s' * (len(added) > 1)} failed at the base alone, "
                f"not compared (added or mended by the change): {', '.join(added)}"
            ),
            highlight=False,
        )
    return tuple(f for f in failures if f.variant != "base" or f.benchmark in at_head)


def _write_check_reports(
    checked: CheckResult, output: OutputOptions, report_link: str | None, err: Console
) -> None:
    """The run's HTML report, the pull-request comment (linking the report) and the JSON."""

    def html(page: HtmlPage) -> str:
        from perflab.report.html import render_html

        return render_html(checked.result)

    html_path = output.html_path
    link = report_link or (
        Path(str(html_path)).name if html_path is not None and not on_stdout(html_path) else None
    )

    def document() -> str:
        run = json.loads(render_json(checked.result))
        return json.dumps({**checked.to_json(), "run": run}, indent=2) + "\n"

    renderers = Renderers(
        json=document, markdown=lambda: check_markdown(checked, report_link=link), html=html
    )
    write_reports(output, renderers, err)


def checked_link(text: str) -> str:
    """--report-link: an http(s) URL with a host and nothing that could not be one (spaces,
    control characters, a user name before the host); a clear error otherwise."""
    hint = "give the report's address, e.g. --report-link https://ci.example.com/runs/42/report"
    if any(c.isspace() or not c.isprintable() for c in text):
        raise ConfigError(f"--report-link {text!r} holds spaces or control characters", hint=hint)
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is no number raises here
    except ValueError as error:
        raise ConfigError(f"--report-link {text!r} is not a URL: {error}", hint=hint) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--report-link {text!r} is not an http:// or https:// URL", hint=hint)
    if "@" in parts.netloc:
        raise ConfigError(f"--report-link {text!r} names a user before the host", hint=hint)
    return text


def view(checked: CheckResult, out: Console) -> None:
    """The run that compared HEAD with the base, as `run` shows it."""
    render_terminal(checked.result, out)
