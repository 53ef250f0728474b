"""`perflab bisect`'s handler: the options -> `perflab.workflows.bisect` -> the search path
and the answer on the terminal, its reports, and the exit status."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from perflab.bisection.threshold import parse_threshold
from perflab.cli.exits import EXIT_NOT_FOUND, EXIT_NOT_MEASURED, EXIT_OK
from perflab.cli.reports import HtmlPage, Renderers, write_reports
from perflab.cli.workflows.bisect import WORKFLOW
from perflab.cli.workflows.shared import (
    benchmarked_from,
    refuse_run_only,
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
    _write_bisect_reports(result, output, err)
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


def _write_bisect_reports(result: BisectResult, output: OutputOptions, err: Console) -> None:
    """The JSON, Markdown and HTML of a bisection (the answer, then the search path); the
    HTML page links the culprit's evidence runs, written beside it (NAME-evidence.html, then
    NAME-evidence-RUN.html for each run of the lenses the first lacked)."""

    def html(page: HtmlPage) -> str:
        from perflab.report.html import render_html

        link, more = "", []
        if result.evidence is not None and not page.on_stdout:
            link = page.beside(f"{page.path.stem}-evidence.html", render_html(result.evidence))
            for run in result.more_evidence:
                name = f"{page.path.stem}-evidence-{run.run_id}.html"
                more.append(page.beside(name, render_html(run)))
        return bisect_html(result, evidence_link=link, more_links=more)

    renderers = Renderers(
        json=lambda: json.dumps(result.to_json(), indent=2) + "\n",
        markdown=lambda: bisect_markdown(result),
        html=html,
    )
    write_reports(output, renderers, err)


def view(result: BisectResult, out: Console) -> None:
    """The search path and the answer, then the culprit's evidence runs."""
    render_bisect(result, out)
    for evidence in (result.evidence, *result.more_evidence):
        if evidence is not None:
            render_terminal(evidence, out)
