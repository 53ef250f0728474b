"""Why two instruction counts differ, function by function: each function's cost in both
variants (`function_deltas`), an overload whose signature changed paired into one row.

Pure functions over `FunctionCosts` (perflab.tool_output.callgrind): costs in, values out. What the
inlining evidence says is in `inlining.py`, the costs per layer in `layers.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from perflab.records.accounting import Presence
from perflab.tool_output.callgrind import INSTRUCTIONS_EVENT, FunctionCosts, FunctionId


@dataclass(frozen=True, kw_only=True)
class FunctionDelta:
    """One function's cost in both variants (per iteration when the inputs were scaled)."""

    function: FunctionId
    file: str
    baseline_self: float
    variant_self: float
    baseline_inclusive: float
    variant_inclusive: float
    presence: Presence
    parts: tuple[str, ...] = ()  # the names merged into this row (clones, .cold parts)
    baseline_name: str | None = None  # set when an overload's signature changed (name: variant's)
    # the variant's file name of the object, when it is another build of the baseline's under
    # another name (libpython3.11.so.1.0 / libpython3.12.so.1.0: `tools.object_names`)
    variant_object: str | None = None
    # (baseline, variant): what the CPU ran where callgrind ran this function in both, set when
    # the other lenses saw another dispatch target (valgrind hides AVX-512:
    # perflab.analyse.explanation)
    cpu_ran: tuple[str, str] | None = None
    # the variant's spelling of the function and why it was taken for the baseline's, when the
    # builds spell it differently (a Rust hash: `perflab.tool_output.symbol_names.pair_names`)
    variant_spelling: tuple[str, str] | None = None

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
    baseline: FunctionCosts,
    variant: FunctionCosts,
    event: str = INSTRUCTIONS_EVENT,
    *,
    parts: Mapping[FunctionId, tuple[str, ...]] | None = None,
) -> tuple[FunctionDelta, ...]:
    """Every function of either side, largest |self delta| first (then |inclusive delta|).

    An overload whose signature changed (`f(long, long, long)` in the baseline only, `f(long,
    long)` in the variant only, each the only overload of `f` in that object on its side, from
    the same source file) is one row, named as in the variant, with `baseline_name` set."""
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
            parts=(parts or {}).get(fid, ()),
        )
        if delta.baseline_self or delta.variant_self or delta.delta_inclusive:
            deltas.append(delta)
    deltas = _pair_overloads(deltas, baseline, variant)
    deltas.sort(key=lambda d: (-abs(d.delta_self), -abs(d.delta_inclusive), d.name, d.object))
    return tuple(deltas)


_QUALIFIERS = re.compile(r"(\s+(?:const|volatile|noexcept|&&|&))+$")


def unqualified_signature_base(name: str) -> str | None:
    """`ns::f(long, long) const` -> `ns::f`; None for names without a parameter list (C
    functions), whose signature is not in their name."""
    text = _QUALIFIERS.sub("", name)
    if not text.endswith(")"):
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                return text[:i] or None
    return None


def _pair_overloads(
    deltas: list[FunctionDelta], baseline: FunctionCosts, variant: FunctionCosts
) -> list[FunctionDelta]:
    def overloads(costs: FunctionCosts) -> dict[tuple[str, str], list[FunctionId]]:
        found: dict[tuple[str, str], list[FunctionId]] = {}
        for fid in costs.functions:
            base = unqualified_signature_base(fid.name)
            if base is not None:
                found.setdefault((base, fid.object), []).append(fid)
        return found

    before, after = overloads(baseline), overloads(variant)
    by_id = {d.function: d for d in deltas}
    merged: list[FunctionDelta] = []
    used: set[FunctionId] = set()
    for key, olds in before.items():
        news = after.get(key, [])
        if len(olds) != 1 or len(news) != 1 or olds[0] == news[0]:
            continue
        old, new = by_id.get(olds[0]), by_id.get(news[0])
        if old is None or new is None:
            continue
        if old.presence is not Presence.BASELINE_ONLY or new.presence is not Presence.VARIANT_ONLY:
            continue
        if old.file and new.file and old.file != new.file:
            continue
        used |= {old.function, new.function}
        merged.append(
            FunctionDelta(
                function=new.function,
                file=new.file or old.file,
                baseline_self=old.baseline_self,
                variant_self=new.variant_self,
                baseline_inclusive=old.baseline_inclusive,
                variant_inclusive=new.variant_inclusive,
                presence=Presence.BOTH,
                parts=tuple(sorted(set(old.parts) | set(new.parts))),
                baseline_name=old.name,
            )
        )
    return [d for d in deltas if d.function not in used] + merged
