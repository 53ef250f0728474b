"""Self costs grouped into layers by name rules."""

from __future__ import annotations

import re

from perflab.lenses.instructions.layers import LayerRule, compile_layers, layer_deltas
from perflab.tool_output.callgrind import (
    FunctionCost,
    FunctionId,
)
from tests.support.callgrind_texts import costs


def test_layers_group_self_costs_first_rule_wins_other_last() -> None:
    before = costs({"PyEval": 100, "at::add": 50, "dispatch_call": 30, "malloc": 5})
    after = costs({"PyEval": 100, "at::add": 50, "dispatch_call": 10, "malloc": 5})
    rules = compile_layers([("dispatcher", "dispatch"), ("kernel", "^at::"), ("python", "^Py")])
    found = layer_deltas(before, after, rules)
    assert [(d.layer, d.baseline, d.variant, d.delta) for d in found] == [
        ("dispatcher", 30.0, 10.0, -20.0),
        ("kernel", 50.0, 50.0, 0.0),
        ("python", 100.0, 100.0, 0.0),
        ("other", 5.0, 5.0, 0.0),
    ]
    by_object = LayerRule("libc", re.compile(r"libc\.so"))
    assert by_object.matches(FunctionCost(FunctionId("memcpy", "libc.so.6"), "", (1.0,)))
