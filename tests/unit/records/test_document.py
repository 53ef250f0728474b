"""The format-neutral report (records/document.py): which table columns are numeric, a flame
path's change and depth, and an empty section."""

from __future__ import annotations

import pytest

from perflab.records.document import (
    FIGURE_TYPES,
    Cell,
    FlameNode,
    Paragraph,
    ScatterFigure,
    Section,
    Style,
    Table,
    TrendFigure,
)
from perflab.records.kinds import Verdict


def test_numeric_columns_are_those_said_and_none_past_them() -> None:
    table = Table(
        ("benchmark", "ratio", "verdict"),
        ((Cell("b"), Cell("1.02"), Cell("slower")),),
        numeric=(False, True),
    )
    assert [table.is_numeric(i) for i in range(4)] == [False, True, False, False]
    assert not Table(("a",), ()).is_numeric(0)


def test_a_flame_path_changes_by_its_share_and_is_as_deep_as_its_deepest_child() -> None:
    leaf = FlameNode("memset", "libc.so.6", 0.10, 0.25)
    tree = FlameNode("main", "prog", 1.0, 1.0, (FlameNode("work", "prog", 0.5, 0.6, (leaf,)),))
    assert leaf.delta == pytest.approx(0.15) and leaf.depth == 1
    assert tree.delta == 0.0 and tree.depth == 3


def test_a_section_is_empty_when_nothing_in_it_or_below_it_has_a_block() -> None:
    assert Section("time").is_empty()
    assert Section("time", subsections=(Section("b"), Section("c"))).is_empty()
    nested = Section("time", subsections=(Section("b", (Paragraph("said"),)),))
    assert not nested.is_empty()


def test_the_verdict_styles_are_the_verdicts() -> None:
    assert {Style(v.value) for v in Verdict} <= set(Style)
    assert ScatterFigure in FIGURE_TYPES and TrendFigure in FIGURE_TYPES
