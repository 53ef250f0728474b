"""The differential flame tree (lenses/profile/flame.py): both profiles' call paths merged by
symbol, each with its inclusive share of each side's samples, siblings in name order."""

from __future__ import annotations

import pytest

from perflab.lenses.profile.flame import ROOT, differential_tree
from perflab.records.document import FlameNode

BASELINE = {
    (("libc-2.35.so", "memset"), ("prog", "work"), ("prog", "main")): 30,
    (("prog", "work"), ("prog", "main")): 10,
    (("prog", "setup"), ("prog", "main")): 60,
}
VARIANT = {
    (("libc.so.6", "memset"), ("prog", "work"), ("prog", "main")): 10,
    (("prog", "work"), ("prog", "main")): 10,
    (("prog", "setup"), ("prog", "main")): 60,
    (("prog", "fresh"), ("prog", "main")): 20,
}


def child(node: FlameNode, symbol: str) -> FlameNode:
    (found,) = [c for c in node.children if c.symbol == symbol]
    return found


def test_paths_merge_by_symbol_with_each_sides_inclusive_share() -> None:
    tree = differential_tree(BASELINE, VARIANT)
    assert tree.symbol == ROOT and tree.baseline_share == tree.variant_share == 1.0
    work = child(child(tree, "main"), "work")
    assert (work.baseline_share, work.variant_share) == (pytest.approx(0.4), pytest.approx(0.2))
    memset = child(work, "memset")
    assert memset.object == "libc.so.6"  # the variant's object names the frame it draws
    assert memset.delta == pytest.approx(-0.2)
    fresh = child(child(tree, "main"), "fresh")
    assert (fresh.baseline_share, fresh.variant_share) == (0.0, pytest.approx(0.2))


def test_siblings_are_in_name_order_and_an_empty_side_has_no_share() -> None:
    tree = differential_tree(BASELINE, VARIANT)
    assert [c.symbol for c in child(tree, "main").children] == ["fresh", "setup", "work"]
    alone = differential_tree(BASELINE, {})
    assert alone.variant_share == 0.0 and child(alone, "main").baseline_share == 1.0
    assert differential_tree({}, {}).children == ()
