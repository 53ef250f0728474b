"""`perflab bisect`, `check` and `history`: options -> the workflow -> render, exit status."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

from rich.console import Console
from rich.text import Text

from perflab import api
from perflab.cli.changes import change_options
from perflab.cli.options import OutputOptions, RunOptions, run_options
from perflab.plan.bisect_search import parse_threshold
from perflab.records.bisect import BisectResult, BisectStep, Direction, StepState
from perflab.records.errors import ConfigError, PerflabError
from perflab.records.units import format_ratio
from perflab.records.workflow_results import CheckResult, HistoryResult
from perflab.report.escape import terminal
from perflab.report.files import write_file
from perflab.report.history import (
    bisect_html,
    bisect_markdown,
    check_markdown,
    describe_step,
    history_html,
    history_markdown,
    render_bisect,
    render_history,
    suite_history_headline,
    suite_history_markdown,
)
from perflab.report.json_report import render_json
from perflab.report.terminal import render_terminal
from perflab.report.workflow_views import disagreement_text, overruled_text
from perflab.workflows import Benchmarked, Suite, bisect, check, history, suite_history

EXIT_OK = 0
EXIT_NOT_FOUND = 1  # no regression beyond the threshold, or a step stayed inconclusive
EXIT_NOT_MEASURED = 3  # BAD itself could not be built or measured
EXIT_REGRESSION = 1  # check: a confirmed regression


def run_workflow(args: argparse.Namespace, out: Console, err: Console) -> int:
    options = run_options(args)
    _refuse_run_only(options, args.command)
    if args.command == "bisect":
        return _bisect(args, options, out, err)
    if args.command == "check":
        return _check(args, options, out, err)
    if args.command == "history":
        return _history(args, options, out, err)
    raise ConfigError(f"unknown command {args.command!r}")


def _refuse_run_only(options: RunOptions, command: str) -> None:
    if options.variants:
        raise ConfigError(
            f"{command} makes its own variants (git= commits): --variant cannot be added",
            hint='give keys every variant needs with --each "python=... env.X=..."',
        )
    if options.experiment_file is not None or options.params:
        raise ConfigError(
            f"{command} measures one benchmark given with --cmd or --stmt (and --setup), or a "
            "suite (--pytest, --asv, --gbench); an experiment file and --param are not taken",
            hint=f"e.g. perflab {command} ... --cmd ./build/bench --build make",
        )
    suite = _suite(options)
    if suite is not None and (options.stmt or options.cmd or options.setup or options.name):
        flag = "--pytest" if suite.pytest else "--asv" if suite.asv else "--gbench"
        raise ConfigError(
            f"{flag} makes the benchmarks: --stmt, --setup, --cmd and --name cannot be "
            "combined with it",
            hint="select the suite's benchmarks with -k EXPR (--pytest), --bench REGEX (--asv) "
            "or --filter REGEX (--gbench)",
        )
    if suite is not None and command == "bisect":
        raise ConfigError(
            "bisect looks for the commit that changed one benchmark; a suite (--pytest, --asv, "
            "--gbench) is gated by perflab check and tracked by perflab history",
            hint="bisect one of its benchmarks with --stmt/--cmd, or find which one changed "
            "with perflab history --pytest PATH RANGE",
        )
    if options.fail_on:
        raise ConfigError(
            f"--fail-on is not taken by {command}: its exit status says what it found",
            hint="perflab check exits 1 on a confirmed regression; bisect exits 0 when it "
            "found the commit",
        )
    if options.stmt is None and options.cmd is None and suite is None:
        raise ConfigError(
            "nothing to measure",
            hint="give --cmd (a command), --stmt (a Python statement, with --setup) or a "
            "suite: --pytest PATH, --asv DIR or --gbench BINARY",
        )


def _suite(options: RunOptions) -> Suite | None:
    """The suite given (--pytest, --asv, --gbench and their filters), None when none is."""
    suite = Suite(
        pytest=None if options.pytest_path is None else str(options.pytest_path),
        pytest_filter=options.pytest_filter,
        asv=None if options.asv_path is None else str(options.asv_path),
        asv_filter=options.asv_filter,
        gbench=options.gbench_path,
        gbench_filter=options.gbench_filter,
    )
    return suite if suite.arguments() else None


def _benchmarked(args: argparse.Namespace, options: RunOptions) -> Benchmarked:
    """What every run of the workflow measures; --metric stays among the settings, where the
    workflow reads it as `run` does (the first lens decides, the others are evidence)."""
    settings = dict(options.settings)
    changes = change_options(args)
    return Benchmarked(
        stmt=options.stmt,
        setup=options.setup,
        cmd=options.cmd,
        name=options.name,
        build=changes.build,
        each=getattr(args, "each", None),
        settings=settings,
        store_path=options.output.store,
        cache_dir=changes.cache_dir,
        suite=_suite(options),
    )


def _said_written(paths: list[object], output: OutputOptions, err: Console) -> None:
    """Says `perflab: wrote FILE` for every file a workflow wrote (`-`, stdout, is no file)."""
    if output.quiet:
        return
    for path in paths:
        if str(path) != "-":
            err.print(Text("perflab: wrote ") + terminal(str(path)), highlight=False)


def _bisect(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    threshold = parse_threshold(args.threshold)
    benchmark = _benchmarked(args, options)
    quiet = options.output.quiet

    def said(step: BisectStep, total: int) -> None:
        if not quiet:
            err.print(Text("perflab: ") + terminal(describe_step(step, total)), highlight=False)

    result = bisect(
        args.good,
        args.bad,
        benchmark=benchmark,
        threshold=threshold,
        direction=_direction(args),
        on_step=said,
    )
    output = options.output
    _said_written(_write_bisect_reports(result, output), output, err)
    to_stdout = any(
        p is not None and str(p) == "-"
        for p in (output.json_path, output.markdown_path, output.html_path)
    )
    if not quiet and not to_stdout:
        render_bisect(result, out)
        if result.evidence is not None:
            render_terminal(result.evidence, out)
    if not quiet:
        style = "bold green" if result.culprit is not None else "bold yellow"
        err.print(
            Text("perflab bisect: ", style=style) + terminal(result.answer()), highlight=False
        )
    if result.culprit is not None or result.candidates:
        return EXIT_OK
    if result.steps and result.steps[0].outcome.state.value == "skipped":
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
    HTML page links the culprit's evidence run, written beside it. The paths written."""
    written: list[object] = []
    if output.json_path is not None:
        _write(output.json_path, json.dumps(result.to_json(), indent=2) + "\n")
        written.append(output.json_path)
    evidence = result.evidence
    if output.markdown_path is not None:
        _write(output.markdown_path, bisect_markdown(result))
        written.append(output.markdown_path)
    if output.html_path is not None:
        from perflab.report.html import render_html

        link = ""
        if evidence is not None and str(output.html_path) != "-":
            page = Path(str(output.html_path))
            link = f"{page.stem}-evidence.html"
            _write(page.with_name(link), render_html(evidence))
            written.append(page.with_name(link))
        _write(output.html_path, bisect_html(result, evidence_link=link))
        written.append(output.html_path)
    return written


def _check(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    threshold = parse_threshold(args.threshold)
    benchmark = _benchmarked(args, options)
    output = options.output
    report_link = checked_link(args.report_link) if args.report_link is not None else None
    checked = check(
        args.base_ref,
        benchmark=benchmark,
        head=args.head,
        threshold=threshold,
        merge_base=args.merge_base,
    )
    result = checked.result
    _said_written(_write_check_reports(checked, output, report_link), output, err)
    to_stdout = any(
        p is not None and str(p) == "-"
        for p in (output.json_path, output.markdown_path, output.html_path)
    )
    if not output.quiet and not to_stdout:
        render_terminal(result, out)
    if not output.quiet:
        for note in checked.notes:
            err.print(Text("perflab: ") + terminal(note), highlight=False)
    failed = checked.outcome.state in (StepState.BAD, StepState.SKIPPED)
    style = "bold red" if failed else "bold green"
    # the run's notes above hold each failure in full (with its output): named, not repeated
    above = not output.quiet and not to_stdout
    verdict = _check_verdict(checked, threshold, failures_above=above)
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

        _write(output.html_path, render_html(checked.result))
        written.append(output.html_path)
    link = report_link or (
        Path(str(output.html_path)).name
        if output.html_path is not None and str(output.html_path) != "-"
        else None
    )
    if output.markdown_path is not None:
        _write(output.markdown_path, check_markdown(checked, report_link=link))
        written.append(output.markdown_path)
    if output.json_path is not None:
        document = {**checked.to_json(), "run": json.loads(render_json(checked.result))}
        _write(output.json_path, json.dumps(document, indent=2) + "\n")
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


def _check_verdict(checked: CheckResult, threshold: float, *, failures_above: bool = False) -> str:
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


def _history(args: argparse.Namespace, options: RunOptions, out: Console, err: Console) -> int:
    threshold = parse_threshold(args.threshold)
    benchmark = _benchmarked(args, options)
    output = options.output
    if benchmark.suite is not None:
        return _suite_history(args, benchmark, threshold, output, out, err)
    found = history(args.range_text, benchmark=benchmark, every=args.every, threshold=threshold)
    written: list[object] = []
    if output.json_path is not None:
        _write(output.json_path, json.dumps(found.to_json(), indent=2) + "\n")
        written.append(output.json_path)
    if output.html_path is not None and str(output.html_path) != "-":
        from perflab.report.html import render_html

        page = Path(str(output.html_path))
        links: dict[int, str] = {}
        for number, change in enumerate(found.changes, 1):
            report = change.result
            if report is None and change.run_id is not None and output.store is not None:
                report = api.show(change.run_id, output.store)
            if report is None:
                continue
            name = f"{page.stem}-change{number}.html"
            _write(page.with_name(name), render_html(report))
            written.append(page.with_name(name))
            links[change.index] = name
        _write(page, history_html(found, change_links=links))
        written.append(page)
    if output.markdown_path is not None:
        _write(output.markdown_path, history_markdown(found))
        written.append(output.markdown_path)
    _said_written(written, output, err)
    to_stdout = any(str(p) == "-" for p in (output.json_path, output.markdown_path))
    if not output.quiet and not to_stdout:
        render_history(found, out)
    return _history_status(found, err)


def _suite_history(
    args: argparse.Namespace,
    benchmark: Benchmarked,
    threshold: float,
    output: OutputOptions,
    out: Console,
    err: Console,
) -> int:
    """A suite's history: each benchmark's series, then one line naming those that changed."""
    if output.html_path is not None:
        raise ConfigError(
            "a suite's history is one series per benchmark, and --html draws one series",
            hint="write --json FILE or --markdown FILE for the suite; the HTML page of one "
            "benchmark's trend: perflab history RANGE --stmt/--cmd ... --html FILE",
        )
    found = suite_history(
        args.range_text, benchmark=benchmark, every=args.every, threshold=threshold
    )
    written: list[object] = []
    if output.json_path is not None:
        _write(output.json_path, json.dumps(found.to_json(), indent=2) + "\n")
        written.append(output.json_path)
    if output.markdown_path is not None:
        _write(output.markdown_path, suite_history_markdown(found))
        written.append(output.markdown_path)
    _said_written(written, output, err)
    to_stdout = any(str(p) == "-" for p in (output.json_path, output.markdown_path))
    if not output.quiet and not to_stdout:
        for series in found.series:
            out.print(Text(f"benchmark {series.benchmark}", style="bold"), highlight=False)
            render_history(series, out)
    err.print(
        Text("perflab history: ", style="bold") + terminal(suite_history_headline(found)),
        highlight=False,
    )
    return max(_history_status(series, err) for series in found.series)


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


def _write(path: object, text: str) -> None:
    if str(path) == "-":
        sys.stdout.write(text)
        return
    write_file(str(path), text)  # never through a link: a temporary renamed over the target
