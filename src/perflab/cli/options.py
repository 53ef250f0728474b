"""argparse -> one typed options object per command."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perflab.cli.changes import add_build_options, add_change_commands
from perflab.cli.declarations import add_run_like_commands
from perflab.cli.publish import add_publish_command
from perflab.cli.workflows import WORKFLOWS
from perflab.plan.settings_by_name import setting_default, user_setting_specs
from perflab.plan.specs import AVAILABLE_METRICS
from perflab.plan.suite_source import SuiteSource, suite_given
from perflab.records.kinds import Verdict
from perflab.records.settings import SettingKind, SettingSpec
from perflab.records.version import __version__
from perflab.store import StoreLocation, store_location
from perflab.store.sqlite import DEFAULT_STORE_PATH

EPILOG = """\
variants: NAME followed by KEY=VALUE words, split like a shell splits them:
  python=PATH   interpreter for statement benchmarks (default: the one running perflab)
  env.VAR=VALUE set an environment variable      cwd=DIR   working directory
  cmd=COMMAND   this variant's command (--gbench: its binary)  build=SH  run once in cwd first
  git=REF       a ref, checked out and built in its own worktree; cwd= and a relative python=
                are then inside it      apply=C1,C2  commits or patch files applied on top
  The first variant is the baseline. Two variants with no keys make an A/A test.

examples:
  perflab run --stmt "sum(range(1000))" --variant A --variant B
  perflab run --stmt "torch.add(x, y)" --setup "import torch; x = torch.ones(1); y = x" \\
      --variant "before python=/envs/before/bin/python" \\
      --variant "after python=/envs/after/bin/python"
  perflab run --cmd "./bench --n 1000" --variant "O2 cwd=build-O2" --variant "O3 cwd=build-O3"
  perflab run experiment.toml --json result.json
  perflab run --pytest tests/benchmarks -k sort --variant "old python=/envs/old/bin/python" \\
      --variant "new python=/envs/new/bin/python"
  perflab run --asv benchmarks --bench TimeSort --variant "old python=/envs/old/bin/python" \\
      --variant "new python=/envs/new/bin/python"
  perflab run --gbench ./build/bench --filter BM_Add --variant "old cmd=./old/bench" \\
      --variant "new cmd=./new/bench"
"""


@dataclass(frozen=True)
class OutputOptions:
    """Where and how a command reports: the store, the report files to write and the terminal's
    detail."""

    store: StoreLocation
    json_path: Path | None
    markdown_path: Path | None
    quiet: bool
    html_path: Path | None = None
    samples: bool = False  # the JSON carries the raw samples
    table: bool = False  # show/compare: the terminal table even when a report file is written
    verbose: bool = False  # the terminal: every note, whole assembly diffs and names
    csv_path: Path | None = None  # hyperfine's CSV columns
    hyperfine_json_path: Path | None = None  # hyperfine's JSON (its `results` list)


@dataclass(frozen=True)
class RunOptions:
    """A parsed `perflab run`: what to measure (file, statement or command), its variants and
    parameters, and the settings given on the command line."""

    experiment_file: Path | None
    stmt: str | None
    setup: str | None
    cmd: str | None
    name: str | None
    variants: tuple[str, ...]
    params: tuple[str, ...]
    # Settings fields given on the command line (field name -> value as parsed)
    settings: Mapping[str, Any]
    fail_on: tuple[Verdict, ...]
    output: OutputOptions
    suite: SuiteSource | None = None  # a suite (--pytest, --asv, --gbench) makes the benchmarks


def _fail_on(text: str) -> tuple[Verdict, ...]:
    try:
        return tuple(Verdict(word.strip()) for word in text.split(",") if word.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: choose from {', '.join(v.value for v in Verdict)}"
        ) from None


def _add_output(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, with_exports: bool = True
) -> None:
    parser.add_argument(
        "--store",
        type=store_location,
        default=None,  # resolved after parsing: PERFLAB_STORE, a project file, the default
        metavar="PATH|URL",
        help=f"the SQLite store (default: PERFLAB_STORE, else a project's perflab.toml or "
        f"pyproject.toml [tool.perflab] store, else {DEFAULT_STORE_PATH}), or a team's "
        "PostgreSQL database: postgresql://USER@HOST/DATABASE",
    )
    if with_exports:
        _add_reports(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, no tables")


def _add_reports(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The report files a run can be written as, and what the terminal shows beside them."""
    parser.add_argument("--json", dest="json_path", type=Path, help="write the result as JSON")
    parser.add_argument(
        "--markdown", dest="markdown_path", type=Path, help="write a Markdown summary"
    )
    parser.add_argument(
        "--html",
        dest="html_path",
        type=Path,
        metavar="FILE",
        help="write a self-contained HTML report with plots",
    )
    parser.add_argument(
        "--export-csv",
        dest="csv_path",
        type=Path,
        metavar="FILE",
        help="write each variant's time as CSV, in hyperfine's columns (seconds)",
    )
    parser.add_argument(
        "--export-hyperfine-json",
        dest="hyperfine_json_path",
        type=Path,
        metavar="FILE",
        help="write each variant's time in hyperfine's JSON format, for scripts written "
        "for hyperfine --export-json",
    )
    parser.add_argument(
        "--samples",
        action="store_true",
        help="add every raw sample to the JSON (a 'samples' list)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="the terminal shows every note (not only warnings), whole assembly diffs and "
        "whole C++ names",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="print the terminal tables even when a report is written to a file "
        "(show and compare print them otherwise only when no file is written)",
    )


_CLI_TYPES: dict[SettingKind, Callable[[str], Any]] = {
    SettingKind.NUMBER: float,
    SettingKind.WHOLE: int,
    SettingKind.OPTIONAL_WHOLE: int,
    SettingKind.TEXT: str,
    SettingKind.TEXTS: str,
    SettingKind.METRICS: str,
    SettingKind.LAYERS: str,  # NAME=REGEX, parsed with the other settings
}


def _add_setting(
    group: argparse._ArgumentGroup, name: str, spec: SettingSpec, metrics_help: str
) -> None:
    """One command-line option derived from a setting's spec; given or not, its value lands in
    `args.<field name>` (None: not given)."""
    help_text = spec.help
    if spec.kind is SettingKind.METRICS:
        help_text = f"lenses, comma-separated or repeated: {metrics_help} (default: time)"
    if spec.kind is SettingKind.BOOLEAN and spec.value_setting is not None:
        # a switch with an optional value (--check-output [FILE]): True, or the value's text
        group.add_argument(
            *spec.flags,
            dest=name,
            nargs="?",
            const=True,
            default=None,
            type=str,
            metavar=spec.metavar,
            help=help_text,
        )
        return
    if spec.kind is SettingKind.BOOLEAN:
        # a switch sets the opposite of the default: --no-pin, --cache-sim
        default = setting_default(name)
        group.add_argument(
            *spec.flags,
            dest=name,
            action="store_const",
            const=not default,
            default=None,
            help=help_text,
        )
        return
    kind_type = _CLI_TYPES[spec.kind]
    if spec.repeat:
        group.add_argument(
            *spec.flags,
            dest=name,
            action="append",
            type=kind_type,
            default=None,
            metavar=spec.metavar,
            help=help_text,
        )
        return
    group.add_argument(*spec.flags, dest=name, type=kind_type, metavar=spec.metavar, help=help_text)


def _at_least_one(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """What to measure, how, the lens options (from the settings schema) and the output: `run`'s
    options, which `stack`, `matrix` and the shorthand of commands share."""
    what = run.add_argument_group("what to measure")
    _add_benchmark_arguments(what)
    _add_suite_arguments(what)
    _add_variant_arguments(what)
    _add_measuring_arguments(
        run.add_argument_group("how to measure"), run.add_argument_group("lens options")
    )
    _add_run_output(run.add_argument_group("output"))


def _add_benchmark_arguments(what: argparse._ArgumentGroup) -> None:
    """One benchmark, given on the command line: a statement or a command."""
    what.add_argument("--stmt", help="a Python statement, timed in a loop inside each variant")
    what.add_argument("--setup", help="Python code run once before the statement (default: pass)")
    what.add_argument("--cmd", help="a whole command, run once per sample (hyperfine style)")
    what.add_argument("--name", help="the benchmark's name (default: the statement or command)")


def _add_suite_arguments(what: argparse._ArgumentGroup) -> None:
    """A suite another tool defines, unchanged (pytest-benchmark, asv, Google Benchmark), and
    the filter of its benchmarks."""
    what.add_argument(
        "--pytest",
        dest="pytest_path",
        type=Path,
        metavar="PATH",
        help="a pytest-benchmark suite (a test file or folder), unchanged: every test using the "
        "benchmark fixture is a benchmark named by its pytest node id, run by each variant's "
        "own pytest (pytest-benchmark need not be installed)",
    )
    what.add_argument(
        "-k",
        dest="pytest_filter",
        metavar="EXPR",
        help="with --pytest: only the tests pytest's -k EXPR selects; with --asv: as --bench",
    )
    what.add_argument(
        "--asv",
        dest="asv_path",
        type=Path,
        metavar="DIR",
        help="an asv benchmark directory (or the folder of its asv.conf.json), unchanged: every "
        "time_, timeraw_, peakmem_, mem_ and track_ benchmark at every parameter combination is "
        "a benchmark named as asv names it, listed and run by each variant's interpreter (asv "
        "need not be installed)",
    )
    what.add_argument(
        "--bench",
        dest="asv_filter",
        metavar="REGEX",
        help="with --asv: only the benchmarks whose name REGEX finds (as asv's --bench)",
    )
    what.add_argument(
        "--gbench",
        dest="gbench_path",
        metavar="PATH",
        help="a Google Benchmark binary, unchanged: every benchmark it lists is a benchmark "
        "named as Google Benchmark names it (BM_Add/64/512), run alone, its time Google "
        "Benchmark's own per iteration; a variant's cmd= names its own binary",
    )
    what.add_argument(
        "--filter",
        dest="gbench_filter",
        metavar="REGEX",
        help="with --gbench: only the benchmarks Google Benchmark's --benchmark_filter=REGEX "
        "selects",
    )


def _add_variant_arguments(what: argparse._ArgumentGroup) -> None:
    """The variants compared, and the parameter grid that multiplies the benchmarks."""
    what.add_argument(
        "-v",
        "--variant",
        dest="variants",
        action="append",
        default=[],
        metavar="SPEC",
        help='a variant: "NAME KEY=VALUE ..." (once: measured alone; more: the first is the '
        "baseline)",
    )
    what.add_argument(
        "--param",
        dest="params",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a parameter grid: every value is a benchmark; use $NAME in stmt/setup/cmd",
    )


def _add_measuring_arguments(how: argparse._ArgumentGroup, lens: argparse._ArgumentGroup) -> None:
    """The settings schema's options (a lens's in `lens`, the others in `how`), and -N."""
    metrics_help = ", ".join(m.value for m in AVAILABLE_METRICS)
    for name, spec in user_setting_specs().items():
        if spec.flags:
            _add_setting(lens if spec.lens is not None else how, name, spec, metrics_help)
    how.add_argument(
        "-N",
        dest="shell",
        action="store_const",
        const="none",
        help="commands: no shell (--shell none, hyperfine's -N)",
    )


def _add_run_output(out: argparse._ArgumentGroup) -> None:
    """Where the report goes and in which format, and which verdicts fail the job."""
    _add_output(out)
    out.add_argument(
        "--fail-on",
        type=_fail_on,
        default=(),
        metavar="VERDICTS",
        help="exit 1 when a comparison has one of these verdicts, e.g. slower,inconclusive",
    )


def build_parser() -> argparse.ArgumentParser:
    """perflab's whole command line: every command and its options."""
    parser = argparse.ArgumentParser(
        prog="perflab",
        description="Did my change make this faster, by how much, is that real or noise, and why?",
        epilog="perflab 'CMD A' 'CMD B' is short for run with each command a variant (one "
        "command:\nmeasured alone); `perflab -- ...` when a command is named like a perflab "
        "command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"perflab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="measure a benchmark under several variants and compare them",
        description="Measure a benchmark under several variants and compare them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("experiment_file", nargs="?", type=Path, help="an experiment file (TOML)")
    add_run_arguments(run)
    add_build_options(run)
    add_change_commands(commands, run)
    add_run_like_commands(commands, run, [w.command for w in WORKFLOWS])

    _add_store_commands(commands)
    _add_machine_commands(commands)
    return parser


def _add_store_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`list`, `show` and `compare`: runs read back from the store; `publish`: all of them as a
    site."""
    listing = commands.add_parser("list", help="list stored runs")
    _add_output(listing, with_exports=False)
    listing.add_argument(
        "--limit", type=_at_least_one, default=50, help="at most this many runs (50)"
    )
    listing.add_argument("--json", dest="json_path", type=Path, help="write the list as JSON")

    show = commands.add_parser("show", help="show a stored run again")
    show.add_argument("run", nargs="?", default="latest", help="run id, or latest (default)")
    _add_output(show)
    show.add_argument("--asm", metavar="FUNCTION", help="side-by-side assembly of a function")

    compare = commands.add_parser(
        "compare",
        help="compare two runs (RUN_B against RUN_A), variant by variant: stored runs, or JSON "
        "files written with --json FILE --samples",
    )
    compare.add_argument("run_a", help="the baseline: a run id, latest, or a JSON file")
    compare.add_argument("run_b", help="the candidate: a run id, latest, or a JSON file")
    _add_output(compare)

    _add_output(add_publish_command(commands), with_exports=False)


def _add_machine_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`events` and `doctor`: what this machine can count, and what it can measure."""
    events = commands.add_parser(
        "events",
        help="search perf's event list (names and descriptions) and say what this machine counts",
    )
    events.add_argument("query", help="words that must all appear, e.g. 512 or 'turbo license'")
    events.add_argument(
        "--no-try", action="store_true", help="do not try counting the events found"
    )
    events.add_argument("--json", dest="json_path", type=Path, help="write the events as JSON")

    doctor = commands.add_parser(
        "doctor", help="what this machine can measure, its noise sources, and how to fix them"
    )
    doctor.add_argument("--json", dest="json_path", type=Path, help="write the report as JSON")
    doctor.add_argument(
        "--store",
        dest="check_store",
        nargs="?",
        type=store_location,
        const=STORE_IN_USE,
        default=None,
        metavar="PATH",
        help="check a store instead (read-only; default: the store in use, as `perflab "
        f"doctor` names it, else {DEFAULT_STORE_PATH}): damage, readable runs, interrupted runs",
    )


# `doctor --store` without PATH: the store in use (PERFLAB_STORE, a project file ...); not a
# string, which argparse would pass through --store's type
STORE_IN_USE = object()


def subcommand_names(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def option_names(parser: argparse.ArgumentParser) -> frozenset[str]:
    """Every option string (`--band`, `-v`) of a parser and of its commands' parsers."""
    names: set[str] = set()
    for action in parser._actions:
        names.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                names |= option_names(command)
    return frozenset(names)


def run_options(args: argparse.Namespace) -> RunOptions:
    """The parsed arguments of a run-like command, as the typed options the library is called
    with."""
    return RunOptions(
        experiment_file=args.experiment_file,
        stmt=args.stmt,
        setup=args.setup,
        cmd=args.cmd,
        name=args.name,
        variants=tuple(args.variants),
        params=tuple(args.params),
        settings=_settings_given(args),
        fail_on=tuple(args.fail_on),
        output=output_options(args),
        suite=_suite(args),
    )


def _suite(args: argparse.Namespace) -> SuiteSource | None:
    """The suite given and its filter; -k selects the tests of a pytest suite, or, with --asv
    alone, asv's benchmarks."""
    asv_k = args.asv_path is not None and args.pytest_path is None
    return suite_given(
        gbench=args.gbench_path,
        gbench_filter=args.gbench_filter,
        asv=args.asv_path,
        asv_filter=args.asv_filter or (args.pytest_filter if asv_k else None),
        pytest=args.pytest_path,
        pytest_filter=None if asv_k else args.pytest_filter,
    )


def _settings_given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line, by field name; a switch given a value (--check-
    output FILE) is on, and its value goes to the setting its spec names."""
    given: dict[str, Any] = {}
    for name, spec in user_setting_specs().items():
        value = getattr(args, name, None) if spec.flags else None
        if value is None:
            continue
        if spec.value_setting is not None and isinstance(value, str):
            given[spec.value_setting] = value
            value = True
        given[name] = tuple(value) if isinstance(value, list) else value
    return given


def output_options(args: argparse.Namespace) -> OutputOptions:
    """Where and how the parsed arguments ask the result to be reported."""
    return OutputOptions(
        store=args.store,
        json_path=getattr(args, "json_path", None),
        markdown_path=getattr(args, "markdown_path", None),
        quiet=args.quiet,
        html_path=getattr(args, "html_path", None),
        samples=getattr(args, "samples", False),
        table=getattr(args, "table", False),
        verbose=getattr(args, "verbose", False),
        csv_path=getattr(args, "csv_path", None),
        hyperfine_json_path=getattr(args, "hyperfine_json_path", None),
    )
