"""Instruction costs grouped by layer: the user's `layers` option (name -> pattern on a
function's name or object) compiled to rules, and each layer's self cost in both variants."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from perflab.tool_output.callgrind import INSTRUCTIONS_EVENT, FunctionCost, FunctionCosts

OTHER_LAYER = "other"


@dataclass(frozen=True)
class LayerRule:
    """Functions whose name or object matches `pattern` (re.search) belong to `layer`."""

    layer: str
    pattern: re.Pattern[str]

    @classmethod
    def compile(cls, layer: str, pattern: str) -> LayerRule:
        return cls(layer, re.compile(pattern))

    def matches(self, cost: FunctionCost) -> bool:
        return bool(self.pattern.search(cost.name) or self.pattern.search(cost.object))


def compile_layers(layers: Sequence[tuple[str, str]]) -> tuple[LayerRule, ...]:
    """The `layers` option (`options.layers_of`) -> rules; raises re.error for a bad pattern
    (config validates first)."""
    return tuple(LayerRule.compile(name, pattern) for name, pattern in layers)


def layer_of(cost: FunctionCost, rules: Sequence[LayerRule]) -> str:
    """The first matching rule wins, so users order rules from specific to general."""
    for rule in rules:
        if rule.matches(cost):
            return rule.layer
    return OTHER_LAYER


def layer_costs(
    costs: FunctionCosts, rules: Sequence[LayerRule], event: str = INSTRUCTIONS_EVENT
) -> Mapping[str, float]:
    index = costs.event_index(event)
    totals: dict[str, float] = {rule.layer: 0.0 for rule in rules}
    totals.setdefault(OTHER_LAYER, 0.0)
    for cost in costs.functions.values():
        layer = layer_of(cost, rules)
        totals[layer] = totals.get(layer, 0.0) + cost.self_cost[index]
    return MappingProxyType(totals)


@dataclass(frozen=True)
class LayerDelta:
    """One layer's self cost in the baseline and in the variant."""

    layer: str
    baseline: float
    variant: float

    @property
    def delta(self) -> float:
        return self.variant - self.baseline

    def to_json(self) -> dict[str, object]:
        return {
            "layer": self.layer,
            "baseline": self.baseline,
            "variant": self.variant,
            "delta": self.delta,
        }


def layer_deltas(
    baseline: FunctionCosts,
    variant: FunctionCosts,
    rules: Sequence[LayerRule],
    event: str = INSTRUCTIONS_EVENT,
) -> tuple[LayerDelta, ...]:
    """Self cost per layer in rule order, `other` last."""
    before = layer_costs(baseline, rules, event)
    after = layer_costs(variant, rules, event)
    names = list(dict.fromkeys([*before, *after]))
    names.sort(key=lambda n: n == OTHER_LAYER)
    return tuple(LayerDelta(n, before.get(n, 0.0), after.get(n, 0.0)) for n in names)
