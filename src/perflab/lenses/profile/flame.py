"""A differential flame tree from two profiles' folded stacks. Pure.

Every node is a call path (root first) with its inclusive share of the baseline's and of the
variant's samples. Frames pair by symbol name only, as in :func:`profile_diff.diff_profiles`:
library paths differ between the builds being compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from perflab.records.document import FlameNode
from perflab.tool_output.profile_stacks import Stack

__all__ = ["ROOT", "FlameNode", "differential_tree"]

ROOT = "all"


@dataclass
class _Building:
    obj: str
    baseline: int = 0
    variant: int = 0
    children: dict[str, _Building] = field(default_factory=dict)


def _add(root: _Building, stack: Stack, count: int, *, variant: bool) -> None:
    node = root
    for obj, symbol in reversed(stack):  # stacks are leaf first; trees grow from the root
        child = node.children.get(symbol)
        if child is None:
            child = node.children[symbol] = _Building(obj)
        elif variant and obj:
            child.obj = obj  # the variant's object names the frame: its width is drawn
        node = child
        if variant:
            node.variant += count
        else:
            node.baseline += count


def _freeze(symbol: str, node: _Building, baseline_total: int, variant_total: int) -> FlameNode:
    return FlameNode(
        symbol=symbol,
        object=node.obj,
        baseline_share=node.baseline / baseline_total if baseline_total else 0.0,
        variant_share=node.variant / variant_total if variant_total else 0.0,
        # alphabetical, as flame graphs order siblings: equal paths line up between reports
        children=tuple(
            _freeze(name, child, baseline_total, variant_total)
            for name, child in sorted(node.children.items())
        ),
    )


def differential_tree(baseline: Mapping[Stack, int], variant: Mapping[Stack, int]) -> FlameNode:
    """The merged call tree of two profiles (as :func:`profile_stacks.parse_folded` returns
    them)."""
    root = _Building("")
    for stack, count in baseline.items():
        _add(root, stack, count, variant=False)
    for stack, count in variant.items():
        _add(root, stack, count, variant=True)
    root.baseline = sum(baseline.values())
    root.variant = sum(variant.values())
    return _freeze(ROOT, root, root.baseline, root.variant)
