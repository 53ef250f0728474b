"""docs/python-api.md's runnable example prints what the page shows: the parts that measure
nothing (the benchmarks' names and the error a bad variant raises) run here, in this process,
and their lines must be the page's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "python-api.md"
# the example measures from its `perflab.run(` line to its `try:`; the measuring is left to
# tests/integration, whose timings the page's figures only illustrate
RUN_STARTS, RUN_ENDS = "result = perflab.run(", "try:"


def _example() -> tuple[str, list[str]]:
    """The example's code and its shown output's lines."""
    section = PAGE.read_text().split("## A runnable example", 1)[1]
    code, output = re.findall(r"```[a-z]*\n(.*?)\n```", section, re.DOTALL)[:2]
    return code, output.splitlines()


def test_the_example_prints_the_lines_the_page_shows() -> None:
    code, shown = _example()
    before_run, rest = code.split(RUN_STARTS, 1)
    error_part = RUN_ENDS + rest.split(RUN_ENDS, 1)[1]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(before_run + error_part, {})  # noqa: S102 - the page's own example
    lines = [line.rstrip() for line in printed.getvalue().splitlines()]
    assert lines == [shown[0], shown[-1]], (
        f"docs/python-api.md's example output is out of date; the code prints {lines}"
    )
