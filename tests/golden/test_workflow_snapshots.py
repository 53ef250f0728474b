"""Snapshots of the history and bisect views as the terminal and Markdown show them: a change of
layout or wording shows up as a diff here. Regenerate with PERFLAB_UPDATE_SNAPSHOTS=1 after
checking the new output by eye."""

from __future__ import annotations

import pytest
from rich.console import Console

from perflab.report.workflow_formats import (
    bisect_markdown,
    history_markdown,
    render_bisect,
    render_history,
)
from tests.support.snapshots import check
from tests.support.workflow_runs import bisect_run, history_run


def _terminal(render: object, width: int = 140) -> str:
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    assert callable(render)
    render(console)
    return console.export_text()


@pytest.mark.parametrize("nodes", (True, False), ids=("nodes", "one-node"))
def test_the_history_in_both_formats(nodes: bool) -> None:
    result = history_run(nodes=nodes)
    name = "history" + ("-nodes" if nodes else "")
    check(f"{name}.terminal.txt", _terminal(lambda console: render_history(result, console)))
    check(f"{name}.md", history_markdown(result))


@pytest.mark.parametrize("found", (True, False), ids=("culprit", "candidates"))
def test_the_bisection_in_both_formats(found: bool) -> None:
    result = bisect_run(found=found)
    name = "bisect-" + ("culprit" if found else "candidates")
    check(f"{name}.terminal.txt", _terminal(lambda console: render_bisect(result, console)))
    check(f"{name}.md", bisect_markdown(result))
