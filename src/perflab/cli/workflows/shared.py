"""What the workflows' handlers share: the checks on `run`'s options a workflow does not take,
what is benchmarked, and writing files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from perflab.cli.changes import change_options
from perflab.cli.reports import on_stdout
from perflab.cli.workflows.workflow import Workflow
from perflab.records.errors import ConfigError
from perflab.workflows import Benchmarked, Suite

if TYPE_CHECKING:
    from perflab.cli.options import OutputOptions, RunOptions


def refuse_run_only(options: RunOptions, workflow: Workflow) -> None:
    """`run`'s options a workflow makes itself or does not take, refused with what to do."""
    command = workflow.name
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
    suite = options.suite
    if suite is not None and (options.stmt or options.cmd or options.setup or options.name):
        raise ConfigError(
            f"{suite.kind.flag} makes the benchmarks: --stmt, --setup, --cmd and --name cannot be "
            "combined with it",
            hint="select the suite's benchmarks with -k EXPR (--pytest), --bench REGEX (--asv) "
            "or --filter REGEX (--gbench)",
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


def suite_of(options: RunOptions) -> Suite | None:
    """The suite given (--pytest, --asv, --gbench and their filters), None when none is."""
    return None if options.suite is None else Suite.of(options.suite)


def benchmarked_from(args: argparse.Namespace, options: RunOptions) -> Benchmarked:
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
        suite=suite_of(options),
    )


def writes_to_stdout(output: OutputOptions) -> bool:
    """Whether the JSON, Markdown or HTML report goes to standard output: then the terminal
    view stays off it."""
    return any(on_stdout(p) for p in (output.json_path, output.markdown_path, output.html_path))
