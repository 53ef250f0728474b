"""The command line of git refs and change sets: --build for `run`, and `stack`, `matrix` and
`cache`, which take the benchmark and measuring options of `run`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

STACK_EPILOG = """\
The range's base and each commit after it are checked out into their own worktrees (never
your working tree), built with --build, and measured together in one interleaved experiment:
each step against its predecessor, and the last against the base.

examples:
  perflab stack main..HEAD --cmd "./build/bench" --build "cmake -B build && cmake --build build"
  perflab stack v2.0..main --first-parent --cmd ./bench --build make   # one step per merge
  perflab stack HEAD~3..HEAD --stmt "mod.f()" --setup "import mod" \\
      --build "python3 -m venv venv && venv/bin/pip install -q ." --each "python=venv/bin/python"
"""

MATRIX_EPILOG = """\
Every change (a commit, or a patch file) is applied on every base, each in its own worktree,
built with --build, and measured together with the bases in one interleaved experiment: each
cell against its base, and each change's effect on every base against its effect on the first
base (the interaction).

example:
  perflab matrix --base main --base release-2.1 --change fix-a.patch --change 51247 \\
      --cmd "./build/bench" --build "make -C build" --metric time,instructions
"""


EACH_EXAMPLE = "python=venv/bin/python env.OMP_NUM_THREADS=1"


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


def add_run_like_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    run: argparse.ArgumentParser,
    name: str,
    *,
    help: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    """A command that takes all of `run`'s options (the benchmark, how to measure, the output)
    and adds its own."""
    return commands.add_parser(
        name,
        parents=[run],
        add_help=False,
        help=help,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_each(parser: argparse.ArgumentParser, *, keys_example: str) -> None:
    parser.add_argument(
        "--each",
        metavar="KEYS",
        help=f'variant keys every variant gets, e.g. "{keys_example}"',
    )


def add_change_commands(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    _add_stack(commands, run)
    _add_matrix(commands, run)
    cache = commands.add_parser("cache", help="list or remove cached checkouts and builds")
    cache.add_argument("action", choices=("list", "prune"), help="list, or remove all")
    cache.add_argument(
        "--cache-dir", type=Path, help="the cache (default: ~/.cache/perflab/builds)"
    )
    cache.add_argument("--json", dest="json_path", type=Path, help="write the entries as JSON")


def _add_stack(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    stack = add_run_like_command(
        commands,
        run,
        "stack",
        help="measure a range of commits: each against its parent, and the whole range",
        description="Measure each commit of RANGE against its parent, and the whole range "
        "against its base, in one interleaved experiment.",
        epilog=STACK_EPILOG,
    )
    stack.add_argument("range_text", metavar="RANGE", help="OLDER..NEWER, e.g. main..HEAD")
    stack.add_argument(
        "--first-parent",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="follow RANGE's first-parent line: each merge measured against its first parent, "
        "the effect of what it merged (the default when RANGE holds merges; "
        "--no-first-parent refuses them)",
    )
    add_each(stack, keys_example=EACH_EXAMPLE)


def _add_matrix(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    matrix = add_run_like_command(
        commands,
        run,
        "matrix",
        help="measure changes on several bases, and whether their effect depends on the base",
        description="Apply every --change on every --base and measure all of them in one "
        "interleaved experiment.",
        epilog=MATRIX_EPILOG,
    )
    matrix.add_argument(
        "--base",
        dest="bases",
        action="append",
        default=[],
        metavar="REF",
        help="a base (repeatable; the first is the reference for interactions)",
    )
    matrix.add_argument(
        "--change",
        dest="changes",
        action="append",
        default=[],
        metavar="COMMIT|PATCH",
        help="a change: a commit (its diff to its parent) or a patch file (repeatable)",
    )
    add_each(matrix, keys_example=EACH_EXAMPLE)


def change_options(args: argparse.Namespace) -> ChangeOptions:
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
