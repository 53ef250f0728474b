"""A doc that quotes a module's docstring (a protocol's messages, in docs/worker-protocol.md)
says so with `<!-- quoted from src/perflab/PATH -->` right above the code block, and the block
must be a part of that docstring as it is now: the module is the truth, the page its copy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
_QUOTED = re.compile(r"<!-- quoted from (\S+) -->\n```[^\n]*\n(.*?)\n```", re.DOTALL)


def quotes(text: str) -> list[tuple[str, str]]:
    """(module path, quoted block) for each marked quotation in a document."""
    return [(match[1], match[2]) for match in _QUOTED.finditer(text)]


def test_quoted_docstrings_are_current() -> None:
    stale = []
    for doc in DOCS:
        for path, block in quotes(doc.read_text()):
            source = ROOT / path
            docstring = ast.get_docstring(ast.parse(source.read_text()), clean=False) or ""
            if block not in docstring:
                stale.append(f"{doc.relative_to(ROOT)} quotes {path}")
    assert not stale, "copy the docstring's current text into the page: " + ", ".join(stale)


def test_the_worker_protocol_page_quotes_both_protocols() -> None:
    quoted = {path for path, _ in quotes((ROOT / "docs" / "worker-protocol.md").read_text())}
    assert quoted == {
        "src/perflab/worker/statement_worker.py",
        "src/perflab/worker/command_launcher.py",
    }
