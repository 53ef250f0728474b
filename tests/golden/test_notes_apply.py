"""Every format says a note only where it applies: real runs of a compiled program and of a
pure-Python statement, rendered as terminal text, Markdown, HTML and JSON, must not carry the
notes that are about other code (valgrind's AVX-512 blindness, compile caches shared between
variants) nor say the load note more than once per benchmark."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from perflab import api
from perflab.records.results import RunResult
from perflab.report.html import render_html
from perflab.report.json_report import render_json
from perflab.report.markdown import render_markdown
from perflab.report.terminal import render_terminal

pytestmark = pytest.mark.integration

# make_experiment's keywords, the API a user calls (support/fast_settings is a Settings)
FAST = {"budget_s": 0.5, "min_generations": 2, "seed": 3}
# phrases of notes about code these runs do not have
NOT_HERE = ("valgrind hides", "cache directories", "TORCHINDUCTOR_CACHE_DIR")


def _terminal(result: RunResult) -> str:
    console = Console(width=140, record=True, color_system=None, force_terminal=False)
    render_terminal(result, console)
    return console.export_text()


FORMATS = {
    "terminal": _terminal,
    "markdown": render_markdown,
    "html": lambda result: render_html(result, with_samples=False),
    "json": lambda result: json.dumps(json.loads(render_json(result))["notes"]),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, RunResult]:
    program = api.make_experiment(cmd="true", variants=["A", "B env.X=1"], **FAST)
    pure = api.make_experiment(
        stmt="sorted(data)",
        setup="import random; data = list(range(200)); random.shuffle(data)",
        variants=["A", "B"],
        metrics="time,instructions",
        **FAST,
    )
    return {
        "program": api.run(program, store_path=None),
        "pure-python": api.run(pure, store_path=None),
    }


@pytest.mark.parametrize("run", ["program", "pure-python"])
@pytest.mark.parametrize("form", list(FORMATS))
def test_no_note_where_it_does_not_apply(runs: dict[str, RunResult], run: str, form: str) -> None:
    text = FORMATS[form](runs[run])
    for phrase in NOT_HERE:
        assert phrase not in text, f"{run}, {form}: {phrase!r} does not apply here"
    assert text.count("of the measuring CPU") <= 1
