"""cli.reports.write_reports: the formats asked for, each rendered only then, the pages an HTML
report links written beside it, and `perflab: wrote` said once per file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from perflab.cli.options import OutputOptions
from perflab.cli.reports import HtmlPage, Renderers, write_reports


def _never() -> str:
    raise AssertionError("a format nobody asked for was rendered")


def test_the_asked_formats_are_written_and_said(tmp_path: Path) -> None:
    output = OutputOptions(
        store=tmp_path / "s.db",
        json_path=tmp_path / "r.json",
        markdown_path=None,
        quiet=False,
        html_path=tmp_path / "r.html",
    )

    def html(page: HtmlPage) -> str:
        return f"<a href={page.beside(page.path.stem + '-more.html', 'more')}>"

    err = io.StringIO()
    renderers = Renderers(json=lambda: "{}\n", markdown=_never, html=html, csv=_never)
    written = write_reports(output, renderers, Console(file=err, width=200))
    assert written == [tmp_path / "r.json", tmp_path / "r-more.html", tmp_path / "r.html"]
    assert (tmp_path / "r.html").read_text() == "<a href=r-more.html>"
    assert (tmp_path / "r-more.html").read_text() == "more"
    said = err.getvalue().splitlines()
    assert said == [f"perflab: wrote {path}" for path in written]


def test_standard_output_is_no_file_and_quiet_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = OutputOptions(
        store=tmp_path / "s.db", json_path=Path("-"), markdown_path=None, quiet=True
    )
    err = io.StringIO()
    pages: list[bool] = []

    def html(page: HtmlPage) -> str:
        pages.append(page.on_stdout)
        return ""

    write_reports(output, Renderers(json=lambda: "{}\n", html=html), Console(file=err))
    assert capsys.readouterr().out == "{}\n" and err.getvalue() == "" and pages == []
