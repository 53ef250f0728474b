"""hyperfine's parameter options on the shorthand of commands, as perflab's parameter grid.

`--parameter-scan NAME MIN MAX [-D STEP]` and `--parameter-list NAME V1,V2` become `--param
NAME=V1,V2,...`, and hyperfine's `{NAME}` in a command becomes perflab's `${NAME}`: every value
is a benchmark of its own, named `...[NAME=VALUE]` (with two or more commands, they are compared
at each value; one command is measured alone at each)."""

from __future__ import annotations

import argparse
import re
from decimal import Decimal, InvalidOperation

from perflab.records.errors import ConfigError

# a scan past this is a typo (a step of 0.001 where 1 was meant): each value is a benchmark
MAX_SCAN_VALUES = 1000


def add_parameter_options(parser: argparse.ArgumentParser) -> None:
    """hyperfine's parameter options (--parameter-scan, --parameter-list ...), each value a
    benchmark of its own."""
    group = parser.add_argument_group(
        "parameters (hyperfine's names)",
        "each value is a benchmark of its own, named COMMAND[NAME=VALUE] (perflab's --param): "
        "{NAME} or $NAME in a command is replaced by the value; two or more commands are "
        "compared at each value, one command is measured alone at each",
    )
    group.add_argument(
        "--parameter-scan",
        nargs=3,
        action="append",
        default=[],
        metavar=("NAME", "MIN", "MAX"),
        help="NAME takes the values MIN, MIN+STEP, ... up to MAX (STEP: -D, default 1)",
    )
    group.add_argument(
        "-D",
        "--parameter-step-size",
        metavar="STEP",
        help="the step of --parameter-scan (default: 1)",
    )
    group.add_argument(
        "--parameter-list",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUES"),
        help="NAME takes each of the comma-separated VALUES",
    )


def parameter_grid(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """The parameters the options name, in order, as (name, values)."""
    scans: list[list[str]] = args.parameter_scan
    step: str | None = args.parameter_step_size
    if step is not None and not scans:
        raise ConfigError(
            "--parameter-step-size (-D) is the step of --parameter-scan, which is not given",
            hint="e.g. perflab --parameter-scan n 1 2 -D 0.5 'sleep {n}'",
        )
    grid = [(_name(name), scan_values(low, high, step or "1")) for name, low, high in scans]
    grid += [(_name(name), _listed(name, values)) for name, values in args.parameter_list]
    names = [name for name, _ in grid]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(
            f"parameter {repeated[0]!r} is given more than once",
            hint="give each parameter one --parameter-scan or --parameter-list",
        )
    return grid


def with_placeholders(command: str, names: list[str]) -> str:
    """hyperfine's `{NAME}` as perflab's `${NAME}` (left as is where `$` already precedes it)."""
    for name in names:
        command = re.sub(r"(?<!\$)\{" + re.escape(name) + r"\}", "${" + name + "}", command)
    return command


def scan_values(low: str, high: str, step: str) -> list[str]:
    """MIN, MIN+STEP, ... up to MAX, in decimal (0.1 steps land on 0.3, not 0.30000000000000004)."""
    start, end, by = (
        _number(text, what) for text, what in ((low, "MIN"), (high, "MAX"), (step, "STEP"))
    )
    if by <= 0:
        raise ConfigError(f"the step {step!r} must be positive", hint="e.g. -D 0.5")
    if end < start:
        raise ConfigError(
            f"--parameter-scan goes from MIN {low} up to MAX {high}: MAX is smaller",
            hint="give MIN first, e.g. --parameter-scan n 1 10",
        )
    count = int((end - start) / by) + 1
    if count > MAX_SCAN_VALUES:
        raise ConfigError(
            f"--parameter-scan from {low} to {high} by {step} is {count:,} values, each a "
            f"benchmark: at most {MAX_SCAN_VALUES:,}",
            hint="a larger step (-D)",
        )
    # written without trailing zeros: 1, 1.5, 2 (not 2.0), as a person would type them
    return [format((start + i * by).normalize(), "f") for i in range(count)]


def _number(text: str, what: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite():
        raise ConfigError(
            f"--parameter-scan's {what} {text!r} is not a number",
            hint="e.g. --parameter-scan n 1 10, or -D 0.5 for a step of 0.5",
        )
    return value


def _name(name: str) -> str:
    if not name.isidentifier():
        raise ConfigError(
            f"parameter name {name!r} is not a name (letters, digits and _)",
            hint="e.g. --parameter-list n 1,10,100 with {n} in the command",
        )
    return name


def _listed(name: str, values: str) -> list[str]:
    listed = [v.strip() for v in values.split(",")]
    if any(v == "" for v in listed):
        raise ConfigError(
            f"--parameter-list {name} {values!r} has an empty value",
            hint="comma-separated values, e.g. --parameter-list n 1,10,100",
        )
    return listed
