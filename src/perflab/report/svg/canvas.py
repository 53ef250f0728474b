"""The drawing primitives every plot shares: the palette and verdict colours, numbers as
coordinates, the <svg> element, text, and labels fitted or wrapped to a width."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.records.document import Style
from perflab.records.kinds import Verdict
from perflab.report.escape import html_text as escape

# Colour-blind-friendlier categorical palette (Tableau 10); the baseline takes the first colour.
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
VERDICT_COLOURS = {
    Verdict.FASTER: "#1a7f37",
    Verdict.SLOWER: "#cf222e",
    Verdict.EQUIVALENT: "#0a7ea4",
    Verdict.INCONCLUSIVE: "#b7791f",
    Verdict.INVALID: "#8250df",
}
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"
CHAR_PX = 6.6  # width of one character at 11px: to decide how much of a label fits


def variant_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def coord(value: float) -> str:
    """Coordinates with one decimal: enough for the screen, small files."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def svg_document(
    width: float, height: float, body: Sequence[str], label: str, *, font_px: float = 11.0
) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" '
        f'aria-label="{escape(label)}" viewBox="0 0 {coord(width)} {coord(height)}" '
        f'width="{coord(width)}" height="{coord(height)}" '
        f'style="{_FONT};font-size:{coord(font_px)}px">' + "".join(body) + "</svg>"
    )


def svg_text(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return (
        f'<text x="{coord(x)}" y="{coord(y)}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'
    )


def fit_label(text: str, width_px: float) -> str:
    """As much of `text` as fits in `width_px` at 11px, with an ellipsis when cut."""
    fits = int(width_px / CHAR_PX)
    if fits >= len(text):
        return text
    return text[: fits - 1] + "…" if fits >= 3 else ""


DERIVED_COLOUR = "#555555"  # a bar computed from others (a stack's product of steps)


def style_colour(style: Style) -> str:
    """A verdict style's colour; any other style is a derived value's grey."""
    try:
        return VERDICT_COLOURS[Verdict(style.value)]
    except ValueError:
        return DERIVED_COLOUR


def wrap_label(text: str, width_px: float) -> list[str]:
    """The whole label in lines that fit `width_px` at 11px, broken after " · " separators (a
    part longer than a line is broken inside): a label is never cut."""
    fits = max(8, int(width_px / CHAR_PX))
    lines: list[str] = []
    line = ""
    for part in text.split(" · "):
        candidate = f"{line} · {part}" if line else part
        if len(candidate) <= fits:
            line = candidate
            continue
        if line:
            lines.append(line + " ·")
        while len(part) > fits:
            lines.append(part[:fits])
            part = part[fits:]
        line = part
    lines.append(line)
    return lines
