"""The drawing primitives every plot shares (report/svg/canvas.py): short coordinates, escaped
text, labels cut to a width or wrapped whole, colours by variant and by verdict."""

from __future__ import annotations

import pytest

from perflab.records.document import Style
from perflab.records.kinds import Verdict
from perflab.report.svg.canvas import (
    CHAR_PX,
    DERIVED_COLOUR,
    PALETTE,
    VERDICT_COLOURS,
    coord,
    fit_label,
    style_colour,
    svg_document,
    svg_text,
    variant_colour,
    wrap_label,
)


@pytest.mark.parametrize(
    ("value", "text"), [(3.0, "3"), (3.04, "3"), (3.06, "3.1"), (-0.01, "-0"), (120.25, "120.2")]
)
def test_coordinates_have_one_decimal_and_none_when_whole(value: float, text: str) -> None:
    assert coord(value) == text


def test_text_and_the_label_are_escaped() -> None:
    assert svg_text(1, 2.5, "a<b & c", anchor="end") == (
        '<text x="1" y="2.5" text-anchor="end">a&lt;b &amp; c</text>'
    )
    document = svg_document(100, 20.5, ["<g/>"], 'ratio of "A" <script>')
    assert document.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert 'aria-label="ratio of &quot;A&quot; &lt;script&gt;"' in document
    assert 'viewBox="0 0 100 20.5"' in document and document.endswith("<g/></svg>")


def test_a_label_is_cut_to_its_width_with_an_ellipsis() -> None:
    assert fit_label("short", 100) == "short"
    assert fit_label("a rather long label", 10 * CHAR_PX) == "a rather …"
    assert fit_label("anything", 2 * CHAR_PX) == ""  # no room for a letter and the ellipsis


def test_a_wrapped_label_is_never_cut() -> None:
    label = "numpy 1.26 · python 3.12 · a-very-long-benchmark-name-with-no-separator"
    lines = wrap_label(label, 20 * CHAR_PX)
    assert all(len(line) <= 20 for line in lines)
    assert "".join(lines).replace(" ·", "").replace(" ", "") == label.replace(" · ", "").replace(
        " ", ""
    )
    assert lines[0] == "numpy 1.26 ·"
    assert wrap_label("fits", 200) == ["fits"]


def test_colours_by_variant_and_by_verdict() -> None:
    assert variant_colour(0) == PALETTE[0] and variant_colour(len(PALETTE)) == PALETTE[0]
    assert style_colour(Style.SLOWER) == VERDICT_COLOURS[Verdict.SLOWER]
    assert style_colour(Style.MUTED) == DERIVED_COLOUR  # no verdict: a derived value's grey
    assert set(VERDICT_COLOURS) == set(Verdict)
