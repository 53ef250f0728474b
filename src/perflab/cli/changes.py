"""The command line of git refs and change sets: --build for `run`, and `stack`, `matrix` and
`cache`, which take the benchmark and measuring options of `run` (declared as the workflows'
commands are: cli/declarations.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from perflab.cli.declarations import RunLikeCommand, add_run_like_commands, each_option, option

STACK_TEXT = """\
measure a range of commits: each against its parent, and the whole range

Measure each commit of RANGE against its parent, and the whole range against its base, in one
interleaved experiment.

The range's base and each commit after it are checked out into their own worktrees (never
your working tree), built with --build, and measured together in one interleaved experiment:
each step against its predecessor, and the last against the base.

examples:
  perflab stack main..HEAD --cmd "./build/bench" --build "cmake -B build && cmake --build build"
  perflab stack v2.0..main --first-parent --cmd ./bench --build make   # one step per merge
  perflab stack HEAD~3..HEAD --stmt "mod.f()" --setup "import mod" \\
      --build "python3 -m venv venv && venv/bin/pip install -q ." --each "python=venv/bin/python"
"""

MATRIX_TEXT = """\
measure changes on several bases, and whether their effect depends on the base

Apply every --change on every --base and measure all of them in one interleaved experiment.

Every change (a commit, or a patch file) is applied on every base, each in its own worktree,
built with --build, and measured together with the bases in one interleaved experiment: each
cell against its base, and each change's effect on every base against its effect on the first
base (the interaction).

example:
  perflab matrix --base main --base release-2.1 --change fix-a.patch --change 51247 \\
      --cmd "./build/bench" --build "make -C build" --metric time,instructions
"""


@dataclass(frozen=True)
class ChangeOptions:
    """What `stack` and `matrix` add to `run`'s options (and `--build` of all three;
    `--build-timeout` is a setting, in the settings schema)."""

    build: str | None
    cache_dir: Path | None
    range_text: str | None = None
    bases: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    each: str | None = None
    command: str = "run"
    first_parent: bool | None = None


def add_build_options(run: argparse.ArgumentParser) -> None:
    """The options of how git= variants are checked out and built (--build, --cache-dir)."""
    group = run.add_argument_group("builds and git refs")
    group.add_argument(
        "--build",
        help="the build command of every variant without its own build=; a git= variant runs "
        "it in its checkout",
    )
    group.add_argument(
        "--cache-dir",
        type=Path,
        help="where checkouts and builds of git refs are kept (default: ~/.cache/perflab/builds)",
    )


STACK_OPTIONS = (
    option("range_text", metavar="RANGE", help="OLDER..NEWER, e.g. main..HEAD"),
    option(
        "--first-parent",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="follow RANGE's first-parent line: each merge measured against its first "
        "parent, the effect of what it merged (the default when RANGE holds merges; "
        "--no-first-parent refuses them)",
    ),
    each_option(),
)

MATRIX_OPTIONS = (
    option(
        "--base",
        dest="bases",
        action="append",
        default=[],
        metavar="REF",
        help="a base (repeatable; the first is the reference for interactions)",
    ),
    option(
        "--change",
        dest="changes",
        action="append",
        default=[],
        metavar="COMMIT|PATCH",
        help="a change: a commit (its diff to its parent) or a patch file (repeatable)",
    ),
    each_option(),
)


CHANGE_COMMANDS = (
    RunLikeCommand("stack", STACK_TEXT, STACK_OPTIONS),
    RunLikeCommand("matrix", MATRIX_TEXT, MATRIX_OPTIONS),
)


def add_change_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    add_run_like_commands(commands, run, CHANGE_COMMANDS)
    cache = commands.add_parser("cache", help="list or remove cached checkouts and builds")
    cache.add_argument("action", choices=("list", "prune"), help="list, or remove all")
    cache.add_argument(
        "--cache-dir", type=Path, help="the cache (default: ~/.cache/perflab/builds)"
    )
    cache.add_argument("--json", dest="json_path", type=Path, help="write the entries as JSON")


def change_options(args: argparse.Namespace) -> ChangeOptions:
    """The change options (builds, refs, ranges) a run-like command was given, as one record."""
    return ChangeOptions(
        build=getattr(args, "build", None),
        cache_dir=getattr(args, "cache_dir", None),
        range_text=getattr(args, "range_text", None),
        bases=tuple(getattr(args, "bases", ())),
        changes=tuple(getattr(args, "changes", ())),
        each=getattr(args, "each", None),
        command=args.command,
        first_parent=getattr(args, "first_parent", None),
    )
