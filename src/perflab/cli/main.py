"""`perflab` entry point: parse, call the library, render, exit.

Each command is in its own module (`run.py`, `stored.py`, `publish.py`, `workflows/`), which
imports what it uses where it runs: `perflab show --help` and `perflab list` load no statistics,
engine or lens, as every perflab process pays its start-up inside its budget.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import io
import os
import signal
import sys
import traceback
import types
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from perflab.cli.exits import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_OK
from perflab.cli.options import STORE_IN_USE, build_parser, run_options, subcommand_names
from perflab.cli.reports import error_text, write_json
from perflab.cli.run import run_command
from perflab.cli.shorthand import (
    check_not_a_command,
    is_shorthand,
    shorthand_args,
    shorthand_parser,
)
from perflab.cli.stored import cache, doctor, read_runs
from perflab.cli.workflows import workflow_named
from perflab.machine.started import STARTED_AT_S
from perflab.records.errors import ConfigError, PerflabError, RetiredSettingWarning, RunInterrupted
from perflab.records.redaction import redact
from perflab.store.selection import resolve_store

# Ctrl-C, CI cancellation (SIGTERM), a closed terminal or SSH session (SIGHUP): all stop a run
# the same way, the run marked and nothing left behind
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RUN_LIKE = ("run", "stack", "matrix")  # the commands that measure one experiment into one run


def _interrupt(signum: int, frame: object) -> None:
    # the first Ctrl-C or SIGTERM stops the run; more of them must not interrupt the clean-up
    # (stopping workers and what they started, marking the run), which takes well under 1 s
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise KeyboardInterrupt


class _Console(Console):
    """rich exits with status 1 when its reader goes away; let main() exit with 141 instead."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def _error_console() -> Console:
    """Every message perflab writes to stderr goes through one of these."""
    # messages wrap at the terminal's width; a file or a CI log gets each one on whole lines, so
    # a path or URL in it can be copied
    return Console(stderr=True, soft_wrap=not sys.stderr.isatty())


def main(
    argv: Sequence[str] | None = None,
    *,
    started_at_s: float | None = None,
    own_process: bool = False,
) -> int:
    """The command line; `started_at_s` (time.monotonic()): when the process started, for a
    `perflab` process whose whole life this is (its start-up counts in the budget).
    `own_process`: this process is perflab's alone, so it may adopt the orphans of what it
    runs and stop every child it has at the end; a program calling main() in-process keeps its
    own children."""
    # the handlers below outlive an interrupt (ignored then): give the caller (a test calling
    # main in-process) its own back
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    try:
        return _main(argv, started_at_s, own_process)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def parse_command_line(argv: Sequence[str] | None) -> argparse.Namespace:
    """perflab's commands, or the shorthand `perflab 'cmd a' 'cmd b'` (run of those commands)."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = subcommand_names(parser)
    if is_shorthand(words, commands):
        args = shorthand_parser().parse_args(words)
        if "--" not in words:  # options first (`perflab --runs 2 sho`): the same guard
            check_not_a_command(args.commands[0], commands, after_options=True)
        return _with_store_setting(shorthand_args(args))
    return _with_store_setting(parser.parse_args(words))


def _with_store_setting(args: argparse.Namespace) -> argparse.Namespace:
    """Every command that takes --store gets the store the setting names (--store >
    PERFLAB_STORE > a project file > the default), and doctor says where it came from."""
    if hasattr(args, "store"):
        args.store_setting = resolve_store(args.store, os.environ, Path.cwd())
        args.store = args.store_setting.location
    elif hasattr(args, "check_store"):  # doctor
        store_asked = (
            None
            if args.check_store is None or args.check_store is STORE_IN_USE
            else args.check_store
        )
        args.store_setting = resolve_store(store_asked, os.environ, Path.cwd())
        if args.check_store is not None:
            args.check_store = args.store_setting.location
    return args


@contextlib.contextmanager
def _warnings_said(err: Console) -> Iterator[None]:
    """perflab's own warnings (a retired option given) as one line each on the terminal, as
    its other messages are, rather than Python's warning with a source line; once each,
    though a workflow builds an experiment per commit."""

    shown = warnings.showwarning
    said: set[str] = set()

    def say(message: Warning | str, category: type[Warning], *rest: Any, **more: Any) -> None:
        if not issubclass(category, RetiredSettingWarning):
            shown(message, category, *rest, **more)
        elif str(message) not in said:
            said.add(str(message))
            err.print(f"perflab: warning: {message}", highlight=False, markup=False)

    with warnings.catch_warnings():
        warnings.simplefilter("always", RetiredSettingWarning)
        warnings.showwarning = say
        yield


def _main(argv: Sequence[str] | None, started_at_s: float | None, own_process: bool) -> int:
    try:
        with _usage_errors_redacted():
            args = parse_command_line(argv)
    except ConfigError as error:
        _error_console().print(error_text(str(error)), highlight=False)
        return error.exit_code
    # CI cancellation, `timeout` and service managers send SIGTERM: stop as for Ctrl-C, so the
    # run is marked incomplete and no worker is left behind
    for number in STOP_SIGNALS:
        signal.signal(number, _interrupt)
    # a pipe or a file gets wide tables rather than rich's 80-column default
    out = _Console(width=None if sys.stdout.isatty() else 140)
    err = _error_console()
    try:
        with _warnings_said(err):
            return _dispatch(args, out, err, started_at_s=started_at_s, own_process=own_process)
    except PerflabError as error:
        err.print(error_text(str(error)), highlight=False)
        return error.exit_code
    except RunInterrupted as interrupted:
        err.print(
            f"perflab: interrupted; what was measured is kept as run {interrupted.run_id}: "
            f"perflab show {interrupted.run_id}",
            highlight=False,
        )
        # exit promptly: the interpreter's final garbage collection over scipy's and numpy's
        # objects is slow and nothing of perflab's needs it (the store is closed), so those
        # objects are frozen out of it
        gc.freeze()
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        # a run-like command's run, once created, ends in RunInterrupted: this one had none yet
        kept = "what was measured is kept in the store"
        said = "nothing was measured" if args.command in RUN_LIKE else kept
        err.print(f"perflab: interrupted; {said}", highlight=False)
        gc.freeze()  # as above
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`perflab show --json - | head`): stop quietly, as a pipe does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


@contextlib.contextmanager
def _usage_errors_redacted() -> Iterator[None]:
    """argparse prints its usage errors itself, quoting the words it refused (a store's URL
    typed in the wrong place among them): they pass through the one redaction too."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            yield
    finally:
        sys.stderr.write(redact(captured.getvalue()))


def _redacted_excepthook(
    kind: type[BaseException], error: BaseException, trace: types.TracebackType | None
) -> None:
    """A failure perflab did not foresee still prints its traceback, its credentials hidden."""
    sys.stderr.write(redact("".join(traceback.format_exception(kind, error, trace))))


def _dispatch(
    args: argparse.Namespace,
    out: Console,
    err: Console,
    *,
    started_at_s: float | None,
    own_process: bool,
) -> int:
    """The command's own function; its errors are rendered by the caller."""
    if args.command in RUN_LIKE:
        from perflab.cli.changes import change_options

        with _contained(own_process):
            return run_command(
                run_options(args),
                out,
                err,
                changes=change_options(args),
                started_at_s=started_at_s,
            )
    if args.command == "cache":
        return cache(args, out)
    workflow = workflow_named(args.command)
    if workflow is not None:
        with _contained(own_process):
            return workflow.run(run_options(args), args, out, err)
    if args.command in ("list", "show", "compare"):
        return read_runs(args, out, err)
    if args.command == "publish":
        from perflab.cli.publish import run_publish

        return run_publish(args, out, err)
    if args.command == "events":
        from perflab.diagnose.events import find_events
        from perflab.report.machine_views import render_event_search

        search = find_events(args.query, try_counting=not args.no_try)
        if write_json(args.json_path, [e.to_json() for e in search.events]):
            render_event_search(search, out)
        return EXIT_OK
    if args.command == "doctor":
        return doctor(args, out)
    return EXIT_OK


@contextlib.contextmanager
def _contained(own_process: bool) -> Iterator[None]:
    """Orphans of what a benchmark starts re-parent to perflab, which stops them at the end."""
    from perflab.machine.proc import stop_all_contained

    _adopt_orphans(own_process)
    try:
        yield
    finally:
        stop_all_contained()


def _adopt_orphans(own_process: bool) -> None:
    """Only a process that is perflab's alone becomes the subreaper of what it starts: its
    clean-up stops every child it has, which in a host program (a notebook, a test session)
    would include the host's own servers."""
    if own_process:
        from perflab.machine.proc import become_subreaper

        become_subreaper()


def entry() -> None:
    """The `perflab` command: main() as a process's whole life (its start-up, imports included,
    counts in the budget: the user waits for it; what the process did before it ran perflab,
    a shell's own set-up or a `sleep` before it, does not)."""
    sys.excepthook = _redacted_excepthook
    status = main(started_at_s=STARTED_AT_S, own_process=True)
    # main() gave back the default handlers; a second Ctrl-C arriving now, while the interpreter
    # shuts down, would kill the process with SIGINT instead of letting it exit with `status`
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    if status == EXIT_INTERRUPTED:
        _exit_interrupted()
    sys.exit(status)


def _exit_interrupted() -> None:
    """Exit with 130 after an interrupt, also under `python -m`: there CPython ends the process
    with SIGINT instead of its exit status when a KeyboardInterrupt once ended code run from a
    string (a C extension importing itself), even though perflab caught it. The interpreter's
    finalisation is what does that, so it is skipped; exit handlers still run."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    entry()
