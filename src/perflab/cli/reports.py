"""Where a command's results go: the report files (JSON, Markdown, HTML, CSV, hyperfine's JSON)
checked before measuring and written after, the terminal table when it is wanted, JSON to a
path or standard output, and perflab's error line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from perflab.cli.exits import EXIT_OK
from perflab.cli.options import OutputOptions
from perflab.records.errors import ConfigError
from perflab.records.redaction import redact
from perflab.report.escape import terminal

# a command imports what it uses where it runs (`perflab show --help` and `perflab list` load no
# statistics, engine or lens): every perflab process pays its start-up, inside its budget
if TYPE_CHECKING:
    from perflab.records.results import RunResult


def error_text(message: str) -> Text:
    # a message may quote a store's URL or a library's words about it: never its password
    return Text("perflab: ", style="bold red") + terminal(redact(message), keep_newlines=True)


def write_json(path: Path | None, data: Any) -> bool:
    """Writes `data` as JSON to `path` when one is given; whether standard output is still
    free for the terminal view (it is not when the JSON went there, `-`)."""
    if path is not None:
        write(path, json.dumps(data, indent=2) + "\n")
    return str(path) != "-"


def check_report_targets(output: OutputOptions) -> None:
    """Fail before measuring, not after, when a report cannot be written."""
    from perflab.report.files import check_target

    paths = report_paths(output)
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


def report_paths(output: OutputOptions) -> tuple[Path | None, ...]:
    return (
        output.json_path,
        output.markdown_path,
        output.html_path,
        output.csv_path,
        output.hyperfine_json_path,
    )


def shows_table(output: OutputOptions, *, command: str) -> bool:
    """Whether emit renders the terminal table to standard output."""
    paths = report_paths(output)
    written = [p for p in paths if p is not None]
    files = [p for p in written if str(p) != "-"]
    wants_table = command == "run" or output.table or not files
    return not output.quiet and len(files) == len(written) and wants_table


def same_stream(out: Console, err: Console) -> bool:
    """Whether standard output and standard error are one open file (`2>&1`, a CI log)."""
    try:
        mine, theirs = os.fstat(out.file.fileno()), os.fstat(err.file.fileno())
    except (AttributeError, OSError, ValueError):  # a console on a StringIO has no descriptor
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def emit(
    result: RunResult, output: OutputOptions, out: Console, err: Console, *, command: str
) -> int:
    """Writes the report files `output` asks for and shows the result on the terminal; the exit
    status."""
    from perflab.report.exports import render_csv, render_hyperfine_json
    from perflab.report.json_report import render_json
    from perflab.report.markdown import render_markdown
    from perflab.report.terminal import render_terminal

    written = []
    if output.json_path is not None:
        write(output.json_path, render_json(result, samples=output.samples))
        written.append(output.json_path)
    if output.markdown_path is not None:
        write(output.markdown_path, render_markdown(result))
        written.append(output.markdown_path)
    if output.html_path is not None:
        from perflab.report.html import render_html  # loads jinja2: only here

        with_samples = output.samples and output.json_path is not None
        write(output.html_path, render_html(result, with_samples=with_samples))
        written.append(output.html_path)
    if output.csv_path is not None:
        write(output.csv_path, render_csv(result))
        written.append(output.csv_path)
    if output.hyperfine_json_path is not None:
        write(output.hyperfine_json_path, render_hyperfine_json(result))
        written.append(output.hyperfine_json_path)
    files = [path for path in written if str(path) != "-"]
    if not output.quiet:
        for path in files:
            err.print(f"perflab: wrote {path}", markup=False, highlight=False)
    # `run` shows what it just measured; `show`/`compare` writing a file were asked for the file
    if shows_table(output, command=command):
        html = output.html_path
        html_path = None if html is None or str(html) == "-" else str(html)
        render_terminal(result, out, verbose=output.verbose, html_path=html_path)
    return EXIT_OK


def write(path: Path | str, text: str) -> None:
    """`text` into the report file at `path`, or on standard output where `path` is `-`."""
    if str(path) == "-":
        sys.stdout.write(text)
        return
    from perflab.report.files import write_file

    write_file(path, text)  # never through a link: a temporary renamed over the target
