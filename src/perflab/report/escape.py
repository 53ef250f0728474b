"""Names from the user (benchmarks, variants, parameters, environment values, symbols) made
harmless for each output format. Every renderer inserts such text through one of these.

A name can hold anything a shell or a TOML file lets through: newlines, `</details>`, `<script>`,
Markdown syntax, terminal escape sequences (colours, window titles, hyperlinks), bidirectional
overrides. None of it may change what the report says around the name:

- control characters are *shown*, never emitted: ESC becomes the four characters `\\x1b`, a
  newline `\\n` (where the format has no room for a line break), so a reader sees that the name is
  odd rather than being fooled by it;
- Markdown gets HTML entities for `<`, `>` and `&` and backslashes before its own syntax, so a
  name is text in a table cell, a list item, a heading or inside `<details>`;
- HTML gets entities (jinja2 autoescapes; these functions are for text built outside templates).
"""

from __future__ import annotations

import html
import re

from rich.text import Text

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_CONTROL_BUT_LINES = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
)
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# what Markdown (CommonMark/GFM, with GitHub's math) gives a meaning to inside a line that the
# report itself starts; `<`, `>`, `&` become entities. Line-start syntax (`#`, `-`, `1.`) cannot
# arise: newlines are never passed through
_MARKDOWN_SYNTAX = re.compile(r"([\\`*_\[\]|~$])")
# a mention (`@everyone`, `@org/team`, `@user`) in a pull-request comment notifies people: a
# zero-width space after the `@` keeps the text and breaks the mention
_MENTION = re.compile(r"(?<![\w@])@(?=[\w-])")


def _show(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """Control characters as visible escapes (`\\x1b`, `\\n`); with keep_newlines, newlines
    and tabs stay (for multi-line messages such as tracebacks)."""
    pattern = _CONTROL_BUT_LINES if keep_newlines else _CONTROL
    return pattern.sub(_show, text)


def terminal(text: str, style: str = "", *, keep_newlines: bool = False) -> Text:
    """A name as rich Text: never parsed as rich markup, control characters shown."""
    return Text(visible(text, keep_newlines=keep_newlines), style=style)


def markdown(text: str, *, line_break: str | None = None) -> str:
    """Text for any Markdown context (table cell, list item, heading, inside <details>).

    Newlines become `\\n` unless line_break (e.g. "<br>") is given to join the lines."""
    if line_break is not None:
        return line_break.join(markdown(line) for line in text.split("\n"))
    shown = html.escape(visible(text), quote=False)
    return _MENTION.sub("@\u200b", _MARKDOWN_SYNTAX.sub(r"\\\1", shown))


# perflab's own sentences (notes, hints, explanations) mark code as Markdown does, between
# backticks: "`fast` and `base` differ only in INF=1", "search with `perflab events WORD`". A
# name holding a backtick can only shift which words read as code, never what the text says:
# code is shown as text in every format.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> list[tuple[str, bool]]:
    """The text in segments, each (text, is_code); an unpaired backtick stays in the text."""
    segments: list[tuple[str, bool]] = []
    at = 0
    for found in _CODE_SPAN.finditer(text):
        if found.start() > at:
            segments.append((text[at : found.start()], False))
        segments.append((found.group(1), True))
        at = found.end()
    if at < len(text):
        segments.append((text[at:], False))
    return segments


def markdown_prose(text: str, *, line_break: str | None = None) -> str:
    """perflab's own sentence for Markdown (a note, a hint, a paragraph; not a table cell):
    as `markdown`, but its `code` reads as code. Code holding `<`, `>` or `&` is escaped text
    instead, as `markdown` gives it: inside a code span entities are not read, and raw angle
    brackets never reach the document."""
    if line_break is not None:
        return line_break.join(markdown_prose(line) for line in text.split("\n"))
    out = []
    for segment, code in code_spans(text):
        shown = visible(segment)
        if code and not any(c in shown for c in "<>&"):
            # one space each side when it starts or ends with one: Markdown strips one pair
            pad = " " if shown.startswith(" ") or shown.endswith(" ") else ""
            out.append(f"`{pad}{shown}{pad}`")
        else:
            out.append(markdown(f"`{segment}`" if code else segment))
    return "".join(out)


def html_prose(text: str) -> str:
    """perflab's own sentence for HTML: escaped as `html_text`, its `code` in <code>."""
    return "".join(
        f"<code>{html_text(segment)}</code>" if code else html_text(segment)
        for segment, code in code_spans(text)
    )


def html_text(text: str, *, keep_newlines: bool = True) -> str:
    """Text for HTML or SVG built outside a template: entities, control characters shown."""
    return html.escape(visible(text, keep_newlines=keep_newlines), quote=True)


def html_finalize(value: object) -> object:
    """jinja2 `finalize`: strings reach the autoescaping with control characters shown;
    Markup (SVG the report built itself) passes unchanged."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return visible(value, keep_newlines=True)
    return value
