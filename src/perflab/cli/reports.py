"""Where a command's results go: the report files (JSON, Markdown, HTML, CSV, hyperfine's JSON)
checked before measuring and written after, the terminal table when it is wanted, JSON to a
path or standard output, and perflab's error line."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
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

    def html(_page: HtmlPage) -> str:  # a run's page links no other page
        from perflab.report.html import render_html  # loads jinja2: only here

        with_samples = output.samples and output.json_path is not None
        return render_html(result, with_samples=with_samples)

    renderers = Renderers(
        json=lambda: render_json(result, samples=output.samples),
        markdown=lambda: render_markdown(result),
        html=html,
        csv=lambda: render_csv(result),
        hyperfine_json=lambda: render_hyperfine_json(result),
    )
    write_reports(output, renderers, err)
    # `run` shows what it just measured; `show`/`compare` writing a file were asked for the file
    if shows_table(output, command=command):
        html_path = output.html_path
        shown_html = None if html_path is None or on_stdout(html_path) else str(html_path)
        render_terminal(result, out, verbose=output.verbose, html_path=shown_html)
    return EXIT_OK


def on_stdout(path: object) -> bool:
    """Whether a report path is standard output (`-`)."""
    return path is not None and str(path) == "-"


class HtmlPage:
    """The HTML report being written: its path, and the pages it links (a bisection's evidence,
    a history's change points), written beside it and counted as written."""

    def __init__(self, path: Path | str, written: list[Path | str]) -> None:
        self.path = Path(str(path))
        self.on_stdout = on_stdout(path)  # then there is no folder for pages beside it
        self._written = written

    def beside(self, name: str, text: str) -> str:
        """Writes the page `name` in the report's folder; its name, for the link."""
        write(self.path.with_name(name), text)
        self._written.append(self.path.with_name(name))
        return name


@dataclass(frozen=True, kw_only=True)
class Renderers:
    """How a command renders each report format (each called only when its file is asked
    for); None: the command writes no such format."""

    json: Callable[[], str] | None = None
    markdown: Callable[[], str] | None = None
    html: Callable[[HtmlPage], str] | None = None
    csv: Callable[[], str] | None = None
    hyperfine_json: Callable[[], str] | None = None


def write_reports(output: OutputOptions, renderers: Renderers, err: Console) -> list[Path | str]:
    """Writes every report `output` asks for that the command renders, JSON, Markdown, HTML,
    CSV, then hyperfine's JSON, and says `perflab: wrote FILE` for each file (not for `-`,
    standard output) unless quiet; the paths written."""
    written: list[Path | str] = []
    html, html_path = renderers.html, output.html_path
    page = (
        None if html is None or html_path is None else partial(html, HtmlPage(html_path, written))
    )
    for path, render in (
        (output.json_path, renderers.json),
        (output.markdown_path, renderers.markdown),
        (html_path, page),
        (output.csv_path, renderers.csv),
        (output.hyperfine_json_path, renderers.hyperfine_json),
    ):
        if path is not None and render is not None:
            write(path, render())
            written.append(path)
    if not output.quiet:
        for file in written:
            if not on_stdout(file):
                err.print(Text("perflab: wrote ") + terminal(str(file)), highlight=False)
    return written


def write(path: Path | str, text: str) -> None:
    """`text` into the report file at `path`, or on standard output where `path` is `-`."""
    if on_stdout(path):
        sys.stdout.write(text)
        return
    from perflab.report.files import write_file

    write_file(path, text)  # never through a link: a temporary renamed over the target
