"""Every link between README.md and the pages of docs/ reaches its file and, when it names one,
its heading: a section moved to a page of its own must take its links with it. Anchors are
made from headings as GitHub makes them (lower case, punctuation dropped, spaces to hyphens, a
repeated heading numbered)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^#{1,6}\s+(.*)")


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside code blocks."""
    lines, in_fence = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            lines.append((number, line))
    return lines


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose(text):
        heading = _HEADING.match(line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading[1].strip().lower()).replace(" ", "-")
            found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return found


def broken(doc: Path, text: str) -> list[str]:
    """The links of `doc` (whose text is `text`) to a file or heading that is not there."""
    problems = []
    for number, line in _prose(text):
        for target in _LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            path = (doc.parent / file).resolve() if file else doc
            if not path.exists():
                problems.append(f"line {number}: {target}: no such file")
            elif anchor and path.suffix == ".md":
                text_there = text if path == doc else path.read_text()
                if anchor not in anchors(text_there):
                    problems.append(f"line {number}: {target}: no such heading")
    return problems


def test_every_link_between_the_docs_arrives() -> None:
    found = [
        f"{doc.relative_to(ROOT)}, {problem}"
        for doc in DOCS
        for problem in broken(doc, doc.read_text())
    ]
    assert not found, "links that lead nowhere:\n" + "\n".join(found)


def test_anchors_are_made_as_github_makes_them() -> None:
    text = "# The subprocess seam (`machine/proc.py`)\n## Notes\n## Notes\n```\n# not one\n```\n"
    assert anchors(text) == {"the-subprocess-seam-machineprocpy", "notes", "notes-1"}
    doc = ROOT / "docs" / "architecture.md"
    assert broken(doc, "[a](#notes) [b](store.md#tables) [c](store.md#gone) [d](gone.md)") == [
        "line 1: #notes: no such heading",
        "line 1: store.md#gone: no such heading",
        "line 1: gone.md: no such file",
    ]
