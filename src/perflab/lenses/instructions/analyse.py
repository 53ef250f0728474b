"""Why two instruction counts differ: per-function deltas, inlining changes, layers.

Pure functions over `FunctionCosts` (perflab.lenses.instructions.callgrind): costs in, values out.

Inlining breaks naive per-function deltas: when the compiler stops inlining `helper` into
`kernel`, the table shows `helper +N` and `kernel -M` with M close to N, although the real change
is only the call overhead N - M. `inlining_changes` names that pattern; `reattribute_inlined`
removes it when debug info says which inlined function each instruction came from.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from perflab.lenses.instructions.callgrind import (
    INSTRUCTIONS_EVENT,
    CallCost,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCosts,
)

# A caller "moved by about the opposite amount" when its self-cost change is opposite in sign
# and within this fraction of the helper's own cost (call overhead and register shuffling make
# the two differ a little; -O0 vs -O2 style rewrites make them differ a lot).
INLINING_TOLERANCE = 0.5


class Presence(enum.StrEnum):
    BOTH = "both"
    BASELINE_ONLY = "baseline_only"
    VARIANT_ONLY = "variant_only"


@dataclass(frozen=True)
class FunctionDelta:
    """One function's cost in both variants (per iteration when the inputs were scaled)."""

    function: FunctionId
    file: str
    baseline_self: float
    variant_self: float
    baseline_inclusive: float
    variant_inclusive: float
    presence: Presence

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def object(self) -> str:
        return self.function.object

    @property
    def delta_self(self) -> float:
        return self.variant_self - self.baseline_self

    @property
    def delta_inclusive(self) -> float:
        return self.variant_inclusive - self.baseline_inclusive


def _presence(
    baseline: FunctionCosts, variant: FunctionCosts, fid: FunctionId, event: str
) -> Presence:
    in_baseline = baseline.self_of(fid, event) != 0 or bool(baseline.callees_of(fid))
    in_variant = variant.self_of(fid, event) != 0 or bool(variant.callees_of(fid))
    if in_baseline and not in_variant:
        return Presence.BASELINE_ONLY
    if in_variant and not in_baseline:
        return Presence.VARIANT_ONLY
    return Presence.BOTH


def function_deltas(
    baseline: FunctionCosts, variant: FunctionCosts, event: str = INSTRUCTIONS_EVENT
) -> tuple[FunctionDelta, ...]:
    """Every function of either side, largest |self delta| first (then |inclusive delta|)."""
    deltas = []
    for fid in set(baseline.functions) | set(variant.functions):
        cost = variant.functions.get(fid) or baseline.functions[fid]
        delta = FunctionDelta(
            function=fid,
            file=cost.file,
            baseline_self=baseline.self_of(fid, event),
            variant_self=variant.self_of(fid, event),
            baseline_inclusive=baseline.inclusive_of(fid, event),
            variant_inclusive=variant.inclusive_of(fid, event),
            presence=_presence(baseline, variant, fid, event),
        )
        if delta.baseline_self or delta.variant_self or delta.delta_inclusive:
            deltas.append(delta)
    deltas.sort(key=lambda d: (-abs(d.delta_self), -abs(d.delta_inclusive), d.name, d.object))
    return tuple(deltas)


class InliningKind(enum.StrEnum):
    OUTLINED = "outlined"  # a call now exists where the body used to be inlined
    INLINED = "inlined"  # the body is now inlined where a call used to be


@dataclass(frozen=True)
class CallerMove:
    function: FunctionId
    delta_self: float


@dataclass(frozen=True)
class InliningChange:
    function: FunctionId
    change: InliningKind
    self_cost: float  # the helper's own cost on the side where it exists
    callers: tuple[CallerMove, ...]

    @property
    def callers_delta(self) -> float:
        return sum(caller.delta_self for caller in self.callers)

    def sentence(self) -> str:
        sign = "+" if self.change is InliningKind.OUTLINED else "-"
        now = "now outlined" if self.change is InliningKind.OUTLINED else "now inlined"
        movers = "; ".join(
            f"its caller `{c.function.name}` {_signed(c.delta_self)}" for c in self.callers
        )
        return f"`{self.function.name}` is {now}: {sign}{_count(self.self_cost)} self; {movers}"

    def to_json(self) -> dict[str, object]:
        return {
            "function": self.function.name,
            "object": self.function.object,
            "change": str(self.change),
            "self": self.self_cost,
            "callers": [
                {"name": c.function.name, "object": c.function.object, "delta": c.delta_self}
                for c in self.callers
            ],
            "sentence": self.sentence(),
        }


def _count(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def _signed(value: float) -> str:
    return ("+" if value >= 0 else "\u2212") + _count(abs(value))


def _caller_moves(
    calls: Iterable[CallCost], deltas: Mapping[FunctionId, float], exclude: FunctionId
) -> tuple[CallerMove, ...]:
    seen: dict[FunctionId, float] = {}
    for call in calls:
        if call.caller != exclude and call.caller in deltas:
            seen[call.caller] = deltas[call.caller]
    return tuple(CallerMove(fid, delta) for fid, delta in sorted(seen.items()))


def inlining_changes(
    baseline: FunctionCosts,
    variant: FunctionCosts,
    event: str = INSTRUCTIONS_EVENT,
    tolerance: float = INLINING_TOLERANCE,
    min_cost: float = 0.0,
) -> tuple[InliningChange, ...]:
    """Functions present on one side only whose callers moved by about the opposite amount.

    Callers are taken from the side where the function exists (the other side has no call
    edge to it: that is the point). Functions cheaper than `min_cost` are ignored: a
    statement's counts carry a residue of a few instructions from the worker's handshake."""
    deltas = function_deltas(baseline, variant, event)
    by_id = {d.function: d.delta_self for d in deltas if d.presence is Presence.BOTH}
    changes = []
    for delta in deltas:
        if delta.presence is Presence.VARIANT_ONLY:
            kind, cost, side = InliningKind.OUTLINED, delta.variant_self, variant
        elif delta.presence is Presence.BASELINE_ONLY:
            kind, cost, side = InliningKind.INLINED, delta.baseline_self, baseline
        else:
            continue
        if cost <= 0 or cost < min_cost:
            continue
        callers = _caller_moves(side.callers_of(delta.function), by_id, delta.function)
        moved = sum(c.delta_self for c in callers)
        expected = -cost if kind is InliningKind.OUTLINED else cost
        if callers and abs(moved - expected) <= tolerance * cost:
            changes.append(InliningChange(delta.function, kind, cost, callers))
    return tuple(changes)


# -- layers ----------------------------------------------------------------------------------

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
    """`Settings.layers` -> rules; raises re.error for a bad pattern (config validates first)."""
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


# -- inline-aware re-attribution ---------------------------------------------------------------

InlineFrames = Mapping[str, Mapping[int, tuple[str, ...]]]
"""object path -> address -> function names, innermost (inlined) first."""


def reattribute_inlined(instructions: InstructionCosts, frames: InlineFrames) -> FunctionCosts:
    """Self costs with each instruction charged to the innermost function its debug info names.

    Instructions of objects without frames keep callgrind's attribution. The result has no
    call edges: inclusive costs of this view equal self costs."""
    functions: dict[FunctionId, FunctionCost] = {}
    for row in instructions.rows:
        names = frames.get(row.function.object, {}).get(row.address)
        fid = FunctionId(names[0], row.function.object) if names else row.function
        have = functions.get(fid)
        if have is None:
            functions[fid] = FunctionCost(fid, row.file, row.cost)
        else:
            merged = tuple(a + b for a, b in zip(have.self_cost, row.cost, strict=True))
            functions[fid] = FunctionCost(fid, have.file, merged)
    return FunctionCosts(instructions.events, MappingProxyType(functions), MappingProxyType({}))


def parse_symbolizer_json(text: str) -> dict[int, tuple[str, ...]]:
    """`llvm-symbolizer --inlining --output-style=JSON` output (one JSON object per address)
    -> address -> function names, innermost first. Unknown symbols ("??") are dropped."""
    frames: dict[int, tuple[str, ...]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        address = int(str(record.get("Address", "0")), 16)
        names = tuple(
            str(symbol.get("FunctionName", ""))
            for symbol in record.get("Symbol", [])
            if symbol.get("FunctionName") not in (None, "", "??")
        )
        if names:
            frames[address] = names
    return frames


def parse_addr2line(text: str, addresses: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """`addr2line -i -f -a -e OBJ` output: per address an `0x...` line, then (function,
    file:line) pairs, innermost first."""
    frames: dict[int, list[str]] = {}
    current: int | None = None
    lines = text.splitlines()
    wanted = set(addresses)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("0x"):
            current = int(line, 16)
            i += 1
            continue
        if current is not None and current in wanted and line and line != "??":
            frames.setdefault(current, []).append(line)
        i += 2  # skip the file:line that follows each function name
    return {address: tuple(names) for address, names in frames.items()}
