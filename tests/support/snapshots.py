"""Golden snapshots of rendered reports (tests/golden/data/report): a text compared with its file,
rewritten instead with PERFLAB_UPDATE_SNAPSHOTS=1 after checking the new output by eye."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

DATA = Path(__file__).parents[1] / "golden" / "data" / "report"

UPDATE = os.environ.get("PERFLAB_UPDATE_SNAPSHOTS") == "1"


def check(name: str, text: str) -> None:
    """`text` is the snapshot `name` (it becomes it under PERFLAB_UPDATE_SNAPSHOTS=1)."""
    path = DATA / name
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no snapshot {name}: run with PERFLAB_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text()


def terminal_text(render: object) -> str:
    """What `render(console)` shows on a 140-column terminal without colour."""
    console = Console(width=140, record=True, color_system=None, force_terminal=False)
    assert callable(render)
    render(console)
    return console.export_text()
