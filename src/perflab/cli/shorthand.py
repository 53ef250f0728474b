"""The hyperfine-style shorthand, `perflab 'cmd a' 'cmd b'`: `run` with each word a command to
measure. Its parser, how its words are told from a perflab command, and its words as `run`'s
options."""

from __future__ import annotations

import argparse
import difflib
import shlex
import shutil
from collections.abc import Sequence

from perflab.cli.changes import add_build_options
from perflab.cli.options import add_run_arguments
from perflab.cli.parameters import add_parameter_options, parameter_grid, with_placeholders
from perflab.records.errors import ConfigError

SHORTHAND_USAGE = "perflab [OPTIONS] [--] COMMAND [COMMAND ...]"
SHORTHAND_DESCRIPTION = """\
Measure whole commands, hyperfine style: one command is measured alone (its time with its
interval); two or more are variants cmd1, cmd2 ... of one benchmark, each compared with the
first. `run`'s options apply. A first word that is a perflab command (run, show, list ...) is that
command: put `--` first to measure a program of that name (perflab -- list ./list-v2)."""


def shorthand_parser() -> argparse.ArgumentParser:
    """`perflab 'cmd a' 'cmd b'`: `run` with each word a command variant."""
    parser = argparse.ArgumentParser(
        prog="perflab",
        usage=SHORTHAND_USAGE,
        description=SHORTHAND_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(parser)
    add_build_options(parser)
    add_parameter_options(parser)
    parser.add_argument("commands", nargs="+", metavar="COMMAND", help="a command to measure")
    return parser


def is_shorthand(argv: Sequence[str], commands: Sequence[str]) -> bool:
    """The words are the shorthand of commands when the first is no perflab command and not
    the top-level --help or --version; `--` first always means commands."""
    if not argv:
        return False
    first = argv[0]
    if first == "--":
        return True
    if first in commands or first in ("-h", "--help", "--version"):
        return False
    check_not_a_command(first, commands)
    return True


def check_not_a_command(word: str, commands: Sequence[str], after_options: bool = False) -> None:
    """A perflab command, or a misspelt one, where the shorthand expects a program to measure
    is a mistake (no such program exists), not a run that fails: refuse it."""
    if shutil.which(word) is not None or set(word) & set(" /"):
        return
    hint = f"to measure a program named {word}, put -- before it: perflab -- {word}"
    if after_options and word in commands:
        raise ConfigError(
            f"{word!r} is a perflab command: its options go after it (perflab {word} ...)",
            hint=hint,
        )
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.75)
    if close:
        raise ConfigError(f"unknown command {word!r}: did you mean {close[0]}?", hint=hint)


def shorthand_args(args: argparse.Namespace) -> argparse.Namespace:
    """The shorthand's words as `run`'s options: one command is `--cmd`; several are variants
    cmd1, cmd2 ... with cmd=, the benchmark named after them all; hyperfine's parameters are
    perflab's parameter grid (cli/parameters.py)."""
    grid = parameter_grid(args)
    commands = [with_placeholders(c, [name for name, _ in grid]) for c in args.commands]
    args.params = [*args.params, *(f"{name}={','.join(values)}" for name, values in grid)]
    if args.stmt is not None or args.cmd is not None or args.variants:
        raise ConfigError(
            "commands given as words are the benchmark and its variants: --stmt, --cmd and "
            "--variant cannot be added",
            hint="use perflab run --cmd ... --variant ... for anything else",
        )
    args.command = "run"
    args.experiment_file = None
    args.cmd = commands[0]
    if len(commands) > 1:
        args.variants = [f"cmd{i} cmd={shlex.quote(c)}" for i, c in enumerate(commands, 1)]
        args.name = args.name or " vs ".join(args.commands)  # as typed
    elif grid:
        args.name = args.name or args.commands[0]  # as typed, hyperfine's {NAME} included
    return args
