"""`perflab bisect`'s handler: the options -> `perflab.workflows.bisect` -> the search path
and the answer on the terminal, its reports, and the exit status."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from perflab.bisection.threshold import parse_threshold
from perflab.cli.exits import EXIT_NOT_FOUND, EXIT_NOT_MEASURED, EXIT_OK
from perflab.cli.reports import write
from perflab.cli.workflows.bisect import WORKFLOW
from perflab.cli.workflows.shared import (
    benchmarked_from,
    refuse_run_only,
    said_written,
    writes_to_stdout,
)
from perflab.records.bisect import BisectResult, BisectStep, Direction, StepState
from perflab.records.errors import ConfigError
from perflab.report.escape import terminal
from perflab.report.terminal import render_terminal
from perflab.report.workflow_formats import (
    bisect_html,
    bisect_markdown,
    describe_step,
    render_bisect,
)
from perflab.workflows import WorkflowServices, bisect_with

if TYPE_CHECKING:
    from perflab.cli.options import OutputOptions, RunOptions


def handle(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    """`perflab bisect`: finds the commit between GOOD and BAD that crossed the threshold, saying
    each step; the exit status."""
    refuse_run_only(options, WORKFLOW)
    threshold = parse_threshold(args.threshold)
    benchmark = benchmarked_from(args, options)
    quiet = options.output.quiet

    def said(step: BisectStep, total: int) -> None:
        if not quiet:
            err.print(Text("perflab: ") + terminal(describe_step(step, total)), highlight=False)

    result = bisect_with(
        args.good,
        args.bad,
        benchmark=benchmark,
        services=WorkflowServices(on_step=said),
        threshold=threshold,
        direction=_direction(args),
    )
    output = options.output
    said_written(_write_bisect_reports(result, output), output, err)
    to_stdout = writes_to_stdout(output)
    if not quiet and not to_stdout:
        view(result, out)
    # the answer is neither progress nor a table: -q keeps it, as check keeps its verdict
    style = "bold green" if result.culprit is not None else "bold yellow"
    err.print(Text("perflab bisect: ", style=style) + terminal(result.answer()), highlight=False)
    if result.culprit is not None or result.candidates:
        return EXIT_OK
    if result.steps and result.steps[0].outcome.state is StepState.SKIPPED:
        # the step's line and the search path above said why; -q said neither
        why = "" if not quiet else f": {result.steps[0].outcome.reason}"
        err.print(
            Text("perflab: ", style="bold red")
            + terminal(
                f"BAD ({args.bad}) could not be measured{why}; bisect needs a BAD commit "
                "that builds and runs"
            ),
            highlight=False,
        )
        return EXIT_NOT_MEASURED
    return EXIT_NOT_FOUND


def _direction(args: argparse.Namespace) -> Direction:
    if args.faster and args.changed:
        raise ConfigError(
            "--faster and --changed both say which change bisect looks for: give one",
            hint="--faster: the first faster commit; --changed: the first that differs either "
            "way; neither: the first slower one",
        )
    return (
        Direction.FASTER if args.faster else Direction.CHANGED if args.changed else Direction.SLOWER
    )


def _write_bisect_reports(result: BisectResult, output: OutputOptions) -> list[object]:
    """The JSON, Markdown and HTML of a bisection (the answer, then the search path); the
    HTML page links the culprit's evidence runs, written beside it (NAME-evidence.html, then
    NAME-evidence-RUN.html for each run of the lenses the first lacked). The paths written."""
    written: list[object] = []
    if output.json_path is not None:
        write(output.json_path, json.dumps(result.to_json(), indent=2) + "\n")
        written.append(output.json_path)
    evidence = result.evidence
    if output.markdown_path is not None:
        write(output.markdown_path, bisect_markdown(result))
        written.append(output.markdown_path)
    if output.html_path is not None:
        from perflab.report.html import render_html

        link, more = "", []
        if evidence is not None and str(output.html_path) != "-":
            page = Path(str(output.html_path))
            link = f"{page.stem}-evidence.html"
            write(page.with_name(link), render_html(evidence))
            written.append(page.with_name(link))
            for run in result.more_evidence:
                more.append(f"{page.stem}-evidence-{run.run_id}.html")
                write(page.with_name(more[-1]), render_html(run))
                written.append(page.with_name(more[-1]))
        write(output.html_path, bisect_html(result, evidence_link=link, more_links=more))
        written.append(output.html_path)
    return written


def view(result: BisectResult, out: Console) -> None:
    """The search path and the answer, then the culprit's evidence runs."""
    render_bisect(result, out)
    for evidence in (result.evidence, *result.more_evidence):
        if evidence is not None:
            render_terminal(evidence, out)
