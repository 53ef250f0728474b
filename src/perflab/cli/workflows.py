"""`perflab bisect`, `check` and `history`: options -> the workflow -> render, exit status."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.text import Text

from perflab.bisect import BisectStep, parse_threshold
from perflab.cli.changes import change_options
from perflab.cli.options import RunOptions, run_options
from perflab.errors import ConfigError, PerflabError
from perflab.model import Metric
from perflab.report.escape import terminal
from perflab.report.history import describe_step, render_bisect
from perflab.report.terminal import render_terminal
from perflab.workflows import Benchmarked, bisect

EXIT_OK = 0
EXIT_NOT_FOUND = 1  # no regression beyond the threshold, or a step stayed inconclusive
EXIT_NOT_MEASURED = 3  # BAD itself could not be built or measured


def run_workflow(args: argparse.Namespace, out: Console, err: Console) -> int:
    options = run_options(args)
    _refuse_run_only(options, args.command)
    if args.command == "bisect":
        return _bisect(args, options, out, err)
    raise ConfigError(f"unknown command {args.command!r}")


def _refuse_run_only(options: RunOptions, command: str) -> None:
    if options.variants:
        raise ConfigError(
            f"{command} makes its own variants (git= commits): --variant cannot be added",
            hint='give keys every variant needs with --each "python=... env.X=..."',
        )
    if options.experiment_file is not None or options.params:
        raise ConfigError(
            f"{command} measures one benchmark given with --cmd or --stmt (and --setup); an "
            "experiment file and --param are not taken",
            hint=f"e.g. perflab {command} ... --cmd ./build/bench --build make",
        )
    if options.stmt is None and options.cmd is None:
        raise ConfigError(
            "nothing to measure",
            hint="give --cmd (a command) or --stmt (a Python statement, with --setup)",
        )


def _benchmarked(
    args: argparse.Namespace, options: RunOptions
) -> tuple[Benchmarked, Metric | None]:
    settings = dict(options.settings)
    metrics = settings.pop("metrics", None)
    metric: Metric | None = None
    if metrics:
        chosen = tuple(Metric(m) for m in metrics)
        if len(chosen) > 1:
            raise ConfigError(
                f"{args.command} follows one metric, got {', '.join(m.value for m in chosen)}",
                hint="give one: --metric instructions (deterministic) or --metric time",
            )
        metric = chosen[0]
    changes = change_options(args)
    benchmark = Benchmarked(
        stmt=options.stmt,
        setup=options.setup,
        cmd=options.cmd,
        name=options.name,
        build=changes.build,
        each=getattr(args, "each", None),
        settings=settings,
        store_path=options.output.store,
        cache_dir=changes.cache_dir,
    )
    return benchmark, metric


def _bisect(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    threshold = parse_threshold(args.threshold)
    benchmark, metric = _benchmarked(args, options)
    quiet = options.output.quiet

    def said(step: BisectStep, total: int) -> None:
        if not quiet:
            err.print(Text("perflab: ") + terminal(describe_step(step, total)), highlight=False)

    result = bisect(
        args.good,
        args.bad,
        benchmark=benchmark,
        threshold=threshold,
        metric=metric,
        on_step=said,
    )
    output = options.output
    if output.json_path is not None:
        _write(output.json_path, json.dumps(result.to_json(), indent=2) + "\n")
    evidence = result.evidence
    if evidence is not None and output.html_path is not None:
        from perflab.report.html import render_html

        _write(output.html_path, render_html(evidence))
    if evidence is not None and output.markdown_path is not None:
        from perflab.report.markdown import render_markdown

        _write(output.markdown_path, render_markdown(evidence))
    if not quiet and str(output.json_path) != "-":
        if evidence is not None:
            render_terminal(evidence, out)
        render_bisect(result, out)
    if result.culprit is not None or result.candidates:
        return EXIT_OK
    if result.steps and result.steps[0].outcome.state.value == "skipped":
        err.print(
            Text("perflab: ", style="bold red")
            + terminal(
                f"BAD ({args.bad}) could not be measured: {result.steps[0].outcome.reason}; "
                "bisect needs a BAD commit that builds and runs"
            ),
            highlight=False,
        )
        return EXIT_NOT_MEASURED
    return EXIT_NOT_FOUND


def _write(path: object, text: str) -> None:
    if str(path) == "-":
        sys.stdout.write(text)
        return
    try:
        with open(str(path), "w") as handle:
            handle.write(text)
    except OSError as error:
        raise PerflabError(f"cannot write {path}: {error}", hint="check the path") from error
