"""`perflab` entry point: parse, call the library, render, exit."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import gc
import io
import json
import os
import signal
import sys
import traceback
import types
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from perflab.cli.options import (
    STORE_IN_USE,
    OutputOptions,
    RunOptions,
    build_parser,
    check_not_a_command,
    is_shorthand,
    output_options,
    run_options,
    shorthand_args,
    shorthand_parser,
    subcommand_names,
)
from perflab.cli.workflows import workflow_named
from perflab.machine.started import STARTED_AT_S
from perflab.records.errors import ConfigError, PerflabError, RetiredSettingWarning, RunInterrupted
from perflab.records.redaction import redact
from perflab.report.escape import terminal, visible
from perflab.store.setting import resolve_store

# a command imports what it uses where it runs (`perflab show --help` and `perflab list` load no
# statistics, engine or lens): every perflab process pays its start-up, inside its budget
if TYPE_CHECKING:
    from perflab.cli.changes import ChangeOptions
    from perflab.git.cache_entry import CacheEntry
    from perflab.records.model import Experiment
    from perflab.records.results import RunResult
    from perflab.store.health import StoreHealth
    from perflab.store.setting import StoreSetting

EXIT_OK = 0
EXIT_VERDICT = 1  # --fail-on matched
EXIT_DAMAGED_STORE = 2  # doctor --store found damage
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
# Ctrl-C, CI cancellation (SIGTERM), a closed terminal or SSH session (SIGHUP): all stop a run
# the same way, the run marked and nothing left behind
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
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
        given = (
            None
            if args.check_store is None or args.check_store is STORE_IN_USE
            else args.check_store
        )
        args.store_setting = resolve_store(given, os.environ, Path.cwd())
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
            args = _parse(argv)
    except ConfigError as error:
        Console(stderr=True).print(_error_text(str(error)), highlight=False)
        return error.exit_code
    # CI cancellation, `timeout` and service managers send SIGTERM: stop as for Ctrl-C, so the
    # run is marked incomplete and no worker is left behind
    for number in STOP_SIGNALS:
        signal.signal(number, _interrupt)
    # a pipe or a file gets wide tables rather than rich's 80-column default
    out = _Console(width=None if sys.stdout.isatty() else 140)
    # messages wrap at the terminal's width; a file or a CI log gets each one on whole lines
    err = Console(stderr=True, soft_wrap=not sys.stderr.isatty())
    try:
        with _warnings_said(err):
            return _dispatch(args, out, err, started_at_s=started_at_s, own_process=own_process)
    except PerflabError as error:
        err.print(_error_text(str(error)), highlight=False)
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
        err.print("perflab: interrupted; what was measured is kept in the store")
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


def _error_text(message: str) -> Text:
    # a message may quote a store's URL or a library's words about it: never its password
    return Text("perflab: ", style="bold red") + terminal(redact(message), keep_newlines=True)


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
    if args.command in ("run", "stack", "matrix"):
        from perflab.cli.changes import change_options

        with _contained(own_process):
            return _run(
                run_options(args),
                out,
                err,
                changes=change_options(args),
                started_at_s=started_at_s,
            )
    if args.command == "cache":
        return _cache(args, out)
    workflow = workflow_named(args.command)
    if workflow is not None:
        with _contained(own_process):
            return workflow.run(run_options(args), args, out, err)
    if args.command in ("list", "show", "compare"):
        return _read_runs(args, out, err)
    if args.command == "publish":
        from perflab.cli.publish import run_publish

        return run_publish(args, out, err)
    if args.command == "events":
        from perflab.diagnose.events import find_events
        from perflab.report.machine_views import render_event_search

        search = find_events(args.query, try_counting=not args.no_try)
        if _write_json(args.json_path, [e.to_json() for e in search.events]):
            render_event_search(search, out)
        return EXIT_OK
    if args.command == "doctor":
        return _doctor(args, out)
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


def _read_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`list`, `show` and `compare`: runs read back from the store."""
    from perflab import api
    from perflab.report.terminal import render_run_list, render_section
    from perflab.store.postgres import is_postgresql

    if args.command in ("show", "compare"):
        _check_outputs(output_options(args))
    if not is_postgresql(args.store) and not _files_only(args):
        # an SQLite file's pages; a PostgreSQL server checks its own
        _warn_if_damaged(api.check_store(args.store), err)
    if args.command == "list":
        runs = api.list_runs(args.store, args.limit)
        if _write_json(args.json_path, [run.to_json() for run in runs]) and not args.quiet:
            render_run_list(runs, out)
        return EXIT_OK
    if args.command == "show" and args.asm is not None:
        from perflab.lenses.asm.render import asm_view_section  # loads capstone: only here

        views = api.asm_views(args.asm, args.run, args.store)
        if not views:
            err.print(terminal(f"perflab: no function matching {args.asm!r} in run {args.run}"))
            return 2
        for view in views:
            render_section(asm_view_section(view), out, max_rows=None)
        return EXIT_OK
    if args.command == "show":
        result = api.show(args.run, args.store)
    else:
        result = api.compare(args.run_a, args.run_b, args.store)
    return _emit(result, output_options(args), out, err, command=args.command)


def _files_only(args: argparse.Namespace) -> bool:
    """`compare A.json B.json` reads no store."""
    from perflab.store.document import is_document_reference

    return args.command == "compare" and all(
        is_document_reference(ref) for ref in (args.run_a, args.run_b)
    )


def _doctor(args: argparse.Namespace, out: Console) -> int:
    from perflab.report.machine_views import render_doctor, render_store_health

    if args.check_store is not None:
        from perflab import api

        health = api.check_store(args.check_store, thorough=True)
        if _write_json(args.json_path, health.to_json()):
            render_store_health(health, out)
        return EXIT_DAMAGED_STORE if health.damaged else EXIT_OK
    # imported here: its probes' parsers are not needed to run, and perflab's start-up is in
    # the first benchmark's budget
    from perflab.diagnose.doctor import diagnose

    report = diagnose()
    setting: StoreSetting = args.store_setting
    if _write_json(args.json_path, {**report.to_json(), "store": setting.to_json()}):
        render_doctor(report, out)
        # one line whatever its length: a path is read and copied whole
        out.print(
            f"store: {setting.shown()} (from {setting.source})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return EXIT_OK


def _write_json(path: Path | None, data: Any) -> bool:
    """Writes `data` as JSON to `path` when one is given; whether standard output is still
    free for the terminal view (it is not when the JSON went there, `-`)."""
    if path is not None:
        _write(path, json.dumps(data, indent=2) + "\n")
    return str(path) != "-"


def _warn_if_damaged(health: StoreHealth, err: Console) -> None:
    if not health.damaged:
        return
    from perflab.store.health import describe_runs

    readable = (
        f"; readable runs: {describe_runs(health.readable_runs)}, unreadable: "
        f"{describe_runs(health.unreadable_runs)}"
        if health.run_ids
        else ""
    )
    err.print(
        Text("perflab: warning: ", style="bold yellow")
        + Text(
            f"the store {health.path} is damaged ({health.check}: {health.problems[0]})"
            f"{readable}\nhint: perflab doctor --store {health.path}; keep a copy of the file "
            "before trying to repair it"
        ),
        highlight=False,
    )


def _check_outputs(output: OutputOptions) -> None:
    """Fail before measuring, not after, when a report cannot be written."""
    from perflab.report.files import check_target

    paths = _report_paths(output)
    if sum(str(path) == "-" for path in paths if path is not None) > 1:
        raise ConfigError(
            "only one of --json, --markdown, --html, --export-csv and --export-hyperfine-json "
            "can write to standard output (-)",
            hint="write the others to files",
        )
    for path in paths:
        if path is None or str(path) == "-":
            continue
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir() or not os.access(folder, os.W_OK) or path.is_dir():
            raise ConfigError(
                f"cannot write {str(path)!r}: {folder} is not a writable directory"
                if not path.is_dir()
                else f"cannot write {str(path)!r}: it is a directory",
                hint="choose an output path in an existing, writable directory",
            )
        check_target(path)


def _run(
    options: RunOptions,
    out: Console,
    err: Console,
    *,
    changes: ChangeOptions | None = None,
    started_at_s: float | None = None,
) -> int:
    from perflab import api
    from perflab.cli.changes import ChangeOptions
    from perflab.cli.progress import RichProgress
    from perflab.plan.designs import budget_plan

    _check_outputs(options.output)
    changes = changes or ChangeOptions(build=None, cache_dir=None)
    experiment = _experiment(options, changes)
    if not options.output.quiet:
        for planned in experiment.plan_notes:
            err.print(f"perflab: {planned}", markup=False, highlight=False)
    if experiment.pairs and not options.output.quiet:
        err.print(f"perflab: {budget_plan(experiment)}", markup=False, highlight=False)
    run = functools.partial(
        api.run,
        experiment,
        store_path=options.output.store,
        cache_dir=changes.cache_dir,
        started_at_s=started_at_s,
    )
    if options.output.quiet or not err.is_terminal:
        result = run()
    else:
        with RichProgress(err) as progress:
            result = run(progress=progress)
    code = _emit(result, options.output, out, err, command="run")
    if code != EXIT_OK:
        return code
    if options.output.quiet:
        _say_cpu_waits(result, err)
    if result.failures:
        _report_failures(result, options.output, out, err)
        return max(failure.exit_code for failure in result.failures)
    return _fail_on(result, options, err)


def _experiment(options: RunOptions, changes: ChangeOptions) -> Experiment:
    """The experiment of `run`, or of `stack`/`matrix` (which make their own variants)."""
    from perflab import api
    from perflab.plan.config import parse_param

    make = api.make_experiment
    design: dict[str, Any] = {"variants": options.variants}
    if changes.command in ("stack", "matrix"):
        if options.variants:
            raise ConfigError(
                "stack and matrix make their own variants: --variant cannot be added",
                hint='give keys every variant needs with --each "python=... env.X=..."',
            )
        design = {"each": changes.each}
        if changes.range_text is not None:
            make = functools.partial(
                api.make_stack, changes.range_text, first_parent=changes.first_parent
            )
        else:
            make = functools.partial(api.make_matrix, changes.bases, changes.changes)
    return make(
        options.experiment_file,
        **design,
        build=changes.build,
        stmt=options.stmt,
        setup=options.setup,
        cmd=options.cmd,
        name=options.name,
        params=dict(parse_param(p) for p in options.params),
        pytest=options.pytest_path,
        pytest_filter=options.pytest_filter,
        asv=options.asv_path,
        asv_filter=options.asv_filter,
        gbench=options.gbench_path,
        gbench_filter=options.gbench_filter,
        **options.settings,
    )


def _fail_on(result: RunResult, options: RunOptions, err: Console) -> int:
    """EXIT_VERDICT when a comparison's verdict is one of --fail-on's, each such one said."""
    matched = [c for c in result.comparisons if c.verdict in options.fail_on]
    for comparison in matched:
        event = f" {comparison.event}" if comparison.event else ""
        err.print(
            visible(
                f"perflab: --fail-on {comparison.verdict.value}: {comparison.benchmark}, "
                f"{comparison.metric.value}{event}, {comparison.variant} vs {comparison.baseline}: "
                f"ratio {comparison.ratio:.3f} [{comparison.ci_low:.3f}, {comparison.ci_high:.3f}]"
            ),
            markup=False,
            highlight=False,
            soft_wrap=not err.is_terminal,  # a log file gets whole lines
        )
    return EXIT_VERDICT if matched else EXIT_OK


def _report_failures(result: RunResult, output: OutputOptions, out: Console, err: Console) -> None:
    """Each failure once: in the run's notes when its table was shown where the person reads
    stderr (both on the terminal, or both into one file or pipe: `2>&1`), else here in full
    (a table in another file or pipe is not 'above')."""
    together = (out.is_terminal and err.is_terminal) or _same_stream(out, err)
    table_above = _shows_table(output, command="run") and together
    if not table_above:
        for failure in result.failures:
            err.print(_error_text(str(failure)), highlight=False)
    else:
        names = sorted({f.variant for f in result.failures if f.variant})
        quoted = ", ".join(repr(name) for name in names)
        who = f"variant {quoted}" if len(names) == 1 else f"variants {quoted}"
        what = (f"{who} failed" if names else "something failed") + (
            " (the reasons are in its notes above)"
        )
        err.print(
            Text("perflab: ", style="bold red") + visible(f"run {result.run_id}: {what}"),
            highlight=False,
        )
    err.print(
        f"perflab: run {result.run_id} is incomplete; what was measured is stored "
        f"(perflab show {result.run_id})",
        highlight=False,
    )


def _same_stream(out: Console, err: Console) -> bool:
    """Whether standard output and standard error are one open file (`2>&1`, a CI log)."""
    try:
        mine, theirs = os.fstat(out.file.fileno()), os.fstat(err.file.fileno())
    except (AttributeError, OSError, ValueError):  # a console on a StringIO has no descriptor
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def _report_paths(output: OutputOptions) -> tuple[Path | None, ...]:
    return (
        output.json_path,
        output.markdown_path,
        output.html_path,
        output.csv_path,
        output.hyperfine_json_path,
    )


def _shows_table(output: OutputOptions, *, command: str) -> bool:
    """Whether _emit renders the terminal table to standard output."""
    paths = _report_paths(output)
    written = [p for p in paths if p is not None]
    files = [p for p in written if str(p) != "-"]
    wants_table = command == "run" or output.table or not files
    return not output.quiet and len(files) == len(written) and wants_table


def _cache(args: argparse.Namespace, out: Console) -> int:
    from perflab import api
    from perflab.report.changes import render_cache_entries

    if args.action == "prune":
        in_use: list[CacheEntry] = []
        removed = api.prune_cache(args.cache_dir, in_use=in_use)
        if _write_json(args.json_path, [e.to_json() for e in removed]):
            out.print(f"removed {len(removed)} cached checkout(s)", highlight=False)
            if in_use:
                out.print(
                    f"left {len(in_use)} in use by a running perflab run: "
                    + ", ".join(visible(str(e.path)) for e in in_use),
                    highlight=False,
                    markup=False,
                )
        return EXIT_OK
    entries = api.cache_entries(args.cache_dir)
    if _write_json(args.json_path, [e.to_json() for e in entries]):
        render_cache_entries(entries, out)
    return EXIT_OK


def _say_cpu_waits(result: RunResult, err: Console) -> None:
    """`-q` hides tables and progress, not that the run waited for or shared its CPU with
    another perflab run (it took longer, or its samples took turns)."""
    from perflab.machine.cpu_lock import SHARED_CPU_HINT

    for note in result.notes:
        if note.hint == SHARED_CPU_HINT:
            err.print(Text("perflab: ") + terminal(note.message), highlight=False)


def _emit(
    result: RunResult, output: OutputOptions, out: Console, err: Console, *, command: str
) -> int:
    from perflab.report.exports import render_csv, render_hyperfine_json
    from perflab.report.json_report import render_json
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    written = []
    if output.json_path is not None:
        _write(output.json_path, render_json(result, samples=output.samples))
        written.append(output.json_path)
    if output.markdown_path is not None:
        _write(output.markdown_path, render_markdown(result))
        written.append(output.markdown_path)
    if output.html_path is not None:
        from perflab.report.html import render_html  # loads jinja2: only here

        with_samples = output.samples and output.json_path is not None
        _write(output.html_path, render_html(result, with_samples=with_samples))
        written.append(output.html_path)
    if output.csv_path is not None:
        _write(output.csv_path, render_csv(result))
        written.append(output.csv_path)
    if output.hyperfine_json_path is not None:
        _write(output.hyperfine_json_path, render_hyperfine_json(result))
        written.append(output.hyperfine_json_path)
    files = [path for path in written if str(path) != "-"]
    if not output.quiet:
        for path in files:
            err.print(f"perflab: wrote {path}", markup=False, highlight=False)
    # `run` shows what it just measured; `show`/`compare` writing a file were asked for the file
    if _shows_table(output, command=command):
        html = output.html_path
        html_path = None if html is None or str(html) == "-" else str(html)
        render_terminal(result, out, verbose=output.verbose, html_path=html_path)
    return EXIT_OK


def _write(path: Path, text: str) -> None:
    if str(path) == "-":
        sys.stdout.write(text)
        return
    from perflab.report.files import write_file

    write_file(path, text)  # never through a link: a temporary renamed over the target


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
