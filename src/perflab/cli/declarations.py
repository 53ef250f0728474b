"""How a command that takes all of `run`'s options is declared: its own options (`Option`), its
text, and the parser built from such declarations. The workflows (cli/workflows/) and `stack`
and `matrix` (cli/changes.py) declare their commands with these."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# --each's example in every command's help
EACH_EXAMPLE = "python=venv/bin/python env.OMP_NUM_THREADS=1"


@dataclass(frozen=True)
class Option:
    """One argument of a command: its names and `add_argument`'s keywords."""

    names: tuple[str, ...]
    keywords: Mapping[str, Any]


def option(*names: str, **keywords: Any) -> Option:
    """An argument as `add_argument(*names, **keywords)` takes it."""
    return Option(names, keywords)


def each_option() -> Option:
    """--each: the variant keys every variant of a design gets."""
    return option(
        "--each", metavar="KEYS", help=f'variant keys every variant gets, e.g. "{EACH_EXAMPLE}"'
    )


@dataclass(frozen=True)
class RunLikeCommand:
    """A command that takes all of `run`'s options (the benchmark, how to measure, the output)
    and adds its own, in this order. Its text reads as a docstring: the one-line help, a blank
    line, the description's paragraph, a blank line, then the epilog, shown as written."""

    name: str
    text: str
    options: tuple[Option, ...]

    def texts(self) -> tuple[str, str, str]:
        """(help, description on one line, epilog)."""
        help, description, epilog = self.text.split("\n\n", 2)
        return help, " ".join(description.split()), epilog


def add_run_like_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    run: argparse.ArgumentParser,
    table: Sequence[RunLikeCommand],
) -> None:
    """A subcommand per entry of `table`, each taking `run`'s options and its own."""
    for command in table:
        help, description, epilog = command.texts()
        parser = commands.add_parser(
            command.name,
            parents=[run],
            add_help=False,
            help=help,
            description=description,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for each in command.options:
            parser.add_argument(*each.names, **each.keywords)
