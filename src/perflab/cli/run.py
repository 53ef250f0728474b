"""`perflab run`, `stack` and `matrix`: the experiment made from the options, measured with
progress on the terminal, reported, and the exit status (a failed variant, --fail-on)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from perflab.cli.exits import EXIT_OK, EXIT_VERDICT
from perflab.cli.options import OutputOptions, RunOptions
from perflab.cli.reports import check_report_targets, emit, error_text, same_stream, shows_table
from perflab.records.errors import ConfigError
from perflab.report.escape import terminal, visible

# a command imports what it uses where it runs (`perflab show --help` and `perflab list` load no
# statistics, engine or lens): every perflab process pays its start-up, inside its budget
if TYPE_CHECKING:
    from perflab.cli.changes import ChangeOptions
    from perflab.records.model import Experiment
    from perflab.records.results import RunResult


def run_command(
    options: RunOptions,
    out: Console,
    err: Console,
    *,
    changes: ChangeOptions | None = None,
    started_at_s: float | None = None,
) -> int:
    """`perflab run` (and the commands built on it): measures, reports and returns the exit
    status."""
    from perflab import api
    from perflab.cli.changes import ChangeOptions
    from perflab.cli.progress import RichProgress
    from perflab.plan.designs import budget_plan

    check_report_targets(options.output)
    changes = changes or ChangeOptions(build=None, cache_dir=None)
    experiment = _experiment(options, changes)
    if not options.output.quiet:
        for planned in experiment.plan_notes:
            err.print(f"perflab: {planned}", markup=False, highlight=False)
    if experiment.pairs and not options.output.quiet:
        err.print(f"perflab: {budget_plan(experiment)}", markup=False, highlight=False)
    run = functools.partial(
        api.run,
        experiment,
        store_path=options.output.store,
        cache_dir=changes.cache_dir,
        started_at_s=started_at_s,
    )
    if options.output.quiet or not err.is_terminal:
        result = run()
    else:
        with RichProgress(err) as progress:
            result = run(progress=progress)
    code = emit(result, options.output, out, err, command="run")
    if code != EXIT_OK:
        return code
    if options.output.quiet:
        _say_cpu_waits(result, err)
    if result.failures:
        report_failures(result, options.output, out, err)
        return max(failure.exit_code for failure in result.failures)
    return _fail_on(result, options, err)


def _experiment(options: RunOptions, changes: ChangeOptions) -> Experiment:
    """The experiment of `run`, or of `stack`/`matrix` (which make their own variants)."""
    from perflab import api
    from perflab.plan.specs import parse_param

    make = api.make_experiment
    design: dict[str, Any] = {"variants": options.variants}
    if changes.command in ("stack", "matrix"):
        if options.variants:
            raise ConfigError(
                "stack and matrix make their own variants: --variant cannot be added",
                hint='give keys every variant needs with --each "python=... env.X=..."',
            )
        design = {"each": changes.each}
        if changes.range_text is not None:
            make = functools.partial(
                api.make_stack, changes.range_text, first_parent=changes.first_parent
            )
        else:
            make = functools.partial(api.make_matrix, changes.bases, changes.changes)
    return make(
        options.experiment_file,
        **design,
        build=changes.build,
        stmt=options.stmt,
        setup=options.setup,
        cmd=options.cmd,
        name=options.name,
        params=dict(parse_param(p) for p in options.params),
        suite=options.suite,
        **options.settings,
    )


def _fail_on(result: RunResult, options: RunOptions, err: Console) -> int:
    """EXIT_VERDICT when a comparison's verdict is one of --fail-on's, each such one said."""
    matched = [c for c in result.comparisons if c.verdict in options.fail_on]
    for comparison in matched:
        event = f" {comparison.event}" if comparison.event else ""
        err.print(
            visible(
                f"perflab: --fail-on {comparison.verdict.value}: {comparison.benchmark}, "
                f"{comparison.metric.value}{event}, {comparison.variant} vs {comparison.baseline}: "
                f"ratio {comparison.ratio:.3f} [{comparison.ci_low:.3f}, {comparison.ci_high:.3f}]"
            ),
            markup=False,
            highlight=False,
            soft_wrap=not err.is_terminal,  # a log file gets whole lines
        )
    return EXIT_VERDICT if matched else EXIT_OK


def report_failures(result: RunResult, output: OutputOptions, out: Console, err: Console) -> None:
    """Each failure once: in the run's notes when its table was shown where the person reads
    stderr (both on the terminal, or both into one file or pipe: `2>&1`), else here in full
    (a table in another file or pipe is not 'above')."""
    together = (out.is_terminal and err.is_terminal) or same_stream(out, err)
    table_above = shows_table(output, command="run") and together
    if not table_above:
        for failure in result.failures:
            err.print(error_text(str(failure)), highlight=False)
    else:
        names = sorted({f.variant for f in result.failures if f.variant})
        quoted = ", ".join(repr(name) for name in names)
        who = f"variant {quoted}" if len(names) == 1 else f"variants {quoted}"
        what = (f"{who} failed" if names else "something failed") + (
            " (the reasons are in its notes above)"
        )
        err.print(
            Text("perflab: ", style="bold red") + visible(f"run {result.run_id}: {what}"),
            highlight=False,
        )
    err.print(
        f"perflab: run {result.run_id} is incomplete; what was measured is stored "
        f"(perflab show {result.run_id})",
        highlight=False,
    )


def _say_cpu_waits(result: RunResult, err: Console) -> None:
    """`-q` hides tables and progress, not that the run waited for or shared its CPU with
    another perflab run (it took longer, or its samples took turns)."""
    from perflab.machine.cpu_lock import SHARED_CPU_HINT

    for note in result.notes:
        if note.hint == SHARED_CPU_HINT:
            err.print(Text("perflab: ") + terminal(note.message), highlight=False)
