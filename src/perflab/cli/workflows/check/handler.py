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
from perflab.cli.reports import write
from perflab.cli.workflows.check import WORKFLOW
from perflab.cli.workflows.shared import (
    benchmarked_from,
    refuse_run_only,
    said_written,
    writes_to_stdout,
)
from perflab.records.bisect import StepState
from perflab.records.errors import ConfigError, PerflabError
from perflab.records.units import format_ratio
from perflab.records.workflow_results import CheckResult
from perflab.report.escape import terminal
from perflab.report.json_report import render_json
from perflab.report.terminal import render_terminal
from perflab.report.workflow_formats import check_markdown
from perflab.report.workflow_views import disagreement_text, overruled_text
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
    said_written(_write_check_reports(checked, output, report_link), output, err)
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
    verdict = check_verdict(checked, threshold, failures_above=above)
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
    checked: CheckResult, output: OutputOptions, report_link: str | None
) -> list[object]:
    """The run's HTML report, the pull-request comment (linking the report) and the JSON;
    the paths written."""
    written: list[object] = []
    if output.html_path is not None:
        from perflab.report.html import render_html

        write(output.html_path, render_html(checked.result))
        written.append(output.html_path)
    link = report_link or (
        Path(str(output.html_path)).name
        if output.html_path is not None and str(output.html_path) != "-"
        else None
    )
    if output.markdown_path is not None:
        write(output.markdown_path, check_markdown(checked, report_link=link))
        written.append(output.markdown_path)
    if output.json_path is not None:
        document = {**checked.to_json(), "run": json.loads(render_json(checked.result))}
        write(output.json_path, json.dumps(document, indent=2) + "\n")
        written.append(output.json_path)
    return written


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


def check_verdict(checked: CheckResult, threshold: float, *, failures_above: bool = False) -> str:
    """The check's one line; `failures_above`: the run's notes, shown above it, hold each
    failure in full, so a run that measured nothing names the variants that failed."""
    outcome = checked.outcome
    failures = checked.result.failures
    if failures_above and failures and outcome.state is StepState.SKIPPED:
        names = ", ".join(dict.fromkeys(f.variant or "?" for f in failures))
        return f"not measured: {names} failed (the reasons are in the notes above)"
    disagreement = checked.disagreement
    if checked.overruled and disagreement is not None:
        return f"passed: {overruled_text(disagreement)}"
    said = ""
    if disagreement is not None and outcome.state is not StepState.SKIPPED:
        said = "; " + disagreement_text(disagreement, "the gate")
    ratio = ""
    if outcome.ratio is not None:
        low = outcome.ci_low if outcome.ci_low is not None else outcome.ratio
        high = outcome.ci_high if outcome.ci_high is not None else outcome.ratio
        ratio = " " + format_ratio(outcome.ratio, low, high)
    return _verdict_words(checked, threshold, ratio) + said


def _verdict_words(checked: CheckResult, threshold: float, ratio: str) -> str:
    outcome = checked.outcome
    if outcome.state is not StepState.SKIPPED:
        total = len(checked.result.experiment.benchmarks)
        if total > 1:
            return _suite_verdict_words(checked, threshold, ratio, total)
    return {
        StepState.BAD: f"regression: {checked.metric}{ratio}, more than {threshold:.1%} worse "
        "than the base",
        StepState.GOOD: f"passed: {checked.metric}{ratio}, not worse than {threshold:.1%}",
        StepState.INCONCLUSIVE: f"passed, inconclusive: {checked.metric}{ratio} straddles "
        f"{threshold:.1%}; not a confirmed regression (a larger --budget would settle it)",
        StepState.SKIPPED: f"not measured: {outcome.reason}",
    }[outcome.state]


# a suite's one line names at most this many regressed benchmarks (the table has them all)
_NAMED_REGRESSIONS = 5


def _suite_verdict_words(checked: CheckResult, threshold: float, ratio: str, total: int) -> str:
    """A suite's one line: which of its benchmarks regressed and the worst's ratio, or, when
    none did, the slowest's."""
    metric, state = checked.metric, checked.outcome.state
    if state is StepState.BAD:
        named = list(checked.regressed[:_NAMED_REGRESSIONS])
        more = len(checked.regressed) - len(named)
        names = ", ".join(named) + (f" and {more} more" if more > 0 else "")
        return (
            f"regression: {len(checked.regressed)} of {total} benchmarks more than "
            f"{threshold:.1%} worse than the base by {metric} (family-wise): {names}; the "
            f"worst{ratio}"
        )
    if state is StepState.GOOD:
        return (
            f"passed: none of {total} benchmarks worse than {threshold:.1%} by {metric} "
            f"(family-wise); the slowest{ratio}"
        )
    return (
        f"passed, inconclusive: none of {total} benchmarks confirmed worse than "
        f"{threshold:.1%} by {metric}, and some straddle it; the slowest{ratio}; not a "
        "confirmed regression (a larger --budget would settle it)"
    )


def view(checked: CheckResult, out: Console) -> None:
    """The run that compared HEAD with the base, as `run` shows it."""
    render_terminal(checked.result, out)
