"""The declaration of a workflow's command, light enough that building the parser imports no
workflow. The registry (`cli/workflows/__init__.py`) lists the declarations, and the parser and
`main`'s dispatch are built from them; the handler and its view are named and imported when the
command runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rich.console import Console

from perflab.cli.declarations import Option, RunLikeCommand, option
from perflab.lenses.descriptor import load_hook

if TYPE_CHECKING:  # the options module builds its parser from the registry
    from perflab.cli.options import RunOptions

Handler = Callable[[argparse.Namespace, "RunOptions", Console, Console], int]


def threshold_option(what: str) -> Option:
    return option("--threshold", default="2%", help=f"{what}: 2%% or 0.02 (default 2%%)")


@dataclass(frozen=True)
class Workflow:
    """One workflow's command, declared once in its own package (`cli/workflows/<command>/`)."""

    command: RunLikeCommand  # its name, help and options: `run`'s, plus these
    # "module:attribute" of (args, options, out, err) -> exit status: it refuses `run`'s
    # options it does not take, calls the workflow, writes its reports
    handler: str
    view: str  # "module:attribute" of (its answer, console) -> None: the answer on the terminal

    @property
    def name(self) -> str:
        return self.command.name

    def run(self, options: RunOptions, args: argparse.Namespace, out: Console, err: Console) -> int:
        return cast(Handler, load_hook(self.handler))(args, options, out, err)
