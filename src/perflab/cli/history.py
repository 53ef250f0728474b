"""The command line of the workflows over a history: `bisect`, `check` and `history`, which
take the benchmark and measuring options of `run` (and `--build`, `--cache-dir`)."""

from __future__ import annotations

import argparse

BISECT_EPILOG = """\
Each step checks out and builds one commit of BAD's first-parent line (a merge stands for
everything it merged) and compares it with GOOD in an interleaved experiment, kept in the
store. A commit whose build fails is skipped and named; a step that stays inconclusive is
measured again with twice the budget, then the search stops with what is left. Without
--metric the instructions lens answers (deterministic), and the time lens is used when
instructions do not show the regression.

example:
  perflab bisect v1.2 main --cmd ./build/bench --build "make -j" --threshold 2%
"""


def add_history_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    bisect = commands.add_parser(
        "bisect",
        parents=[run],
        add_help=False,
        help="find the first commit after GOOD where the benchmark got worse",
        description="Binary search over BAD's first-parent line for the first commit that is "
        "worse than GOOD by more than --threshold.",
        epilog=BISECT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bisect.add_argument("good", metavar="GOOD", help="a commit where the benchmark was fine")
    bisect.add_argument("bad", metavar="BAD", help="a later commit where it is worse")
    bisect.add_argument(
        "--threshold",
        default="2%",
        help="how much worse than GOOD counts as bad: 2%% or 0.02 (default 2%%)",
    )
    bisect.add_argument(
        "--each",
        metavar="KEYS",
        help='variant keys every variant gets, e.g. "python=venv/bin/python"',
    )
