"""Why two instruction counts differ: per-function deltas, inlining changes, layers.

Pure functions over `FunctionCosts` (perflab.tools.callgrind): costs in, values out.

Inlining breaks naive per-function deltas: when the compiler stops inlining `helper` into
`kernel`, the table shows `helper +N` and `kernel -M`. Arithmetic on those deltas both invents
inlining (a function that merely stopped running) and misses it (a tiny helper whose call
overhead is as large as its body: the caller does not shrink by the helper's cost). So an
inlining change is claimed only from evidence: DWARF inline frames of the executed instructions
show the helper's code inlined into a caller on one side, and the call graph shows that caller
calling an out-of-line copy on the other (`inlining_changes`). `reattribute_inlined` charges
each instruction to the inlined function its debug info names, so the table shows the real
change (the call overhead).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from perflab.records.diagnosis import Claim, Diagnosis
from perflab.tools.callgrind import (
    INSTRUCTIONS_EVENT,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCosts,
)
from perflab.tools.debuginfo import AddressFrames, inline_sites


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
    parts: tuple[str, ...] = ()  # the names merged into this row (clones, .cold parts)
    baseline_name: str | None = None  # set when an overload's signature changed (name: variant's)
    # the variant's file name of the object, when it is another build of the baseline's under
    # another name (libpython3.11.so.1.0 / libpython3.12.so.1.0: `measure.object_names`)
    variant_object: str | None = None
    # (baseline, variant): what the CPU ran where callgrind ran this function in both, set when
    # the other lenses saw another dispatch target (valgrind hides AVX-512:
    # perflab.analyse.explanation)
    cpu_ran: tuple[str, str] | None = None
    # the variant's spelling of the function and why it was taken for the baseline's, when the
    # builds spell it differently (a Rust hash: `perflab.tools.symbol_names.pair_names`)
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


class InliningKind(enum.StrEnum):
    OUTLINED = "outlined"  # a call now exists where the body used to be inlined
    INLINED = "inlined"  # the body is now inlined where a call used to be


# calls per iteration below which a call edge is a statement's residue (the worker's handshake
# left after subtracting the empty loop), not a call the statement makes
MIN_CALLS = 0.01


@dataclass(frozen=True)
class InlinedCopy:
    """Executed code of `callee` inlined into `caller` (at `location`, the call site), inside
    the out-of-line function `host`, in one variant's `object`."""

    callee: str
    caller: str
    object: str
    host: str
    location: str
    cost: float  # instructions (per iteration) executed in the inlined copy


@dataclass(frozen=True)
class OutOfLineCall:
    """Calls (callgrind's call graph) from `caller` to an out-of-line `callee`."""

    callee: str
    caller: str
    object: str
    count: float  # calls per iteration
    callee_self: float  # the out-of-line callee's own cost per iteration


@dataclass(frozen=True)
class InlineEvidence:
    """What one variant's debug info and call graph say about where functions' code ran.

    Names are normalised (demangled, clone suffixes folded) and objects compared by file name,
    as the function table is. `described` are the objects whose executed addresses were read
    through debug info: only there can the absence of an inlined copy be told."""

    copies: tuple[InlinedCopy, ...] = ()
    calls: tuple[OutOfLineCall, ...] = ()
    described: frozenset[str] = frozenset()
    identities: Mapping[str, str] = field(default_factory=dict)  # object -> build-id/hash
    ran: frozenset[str] = frozenset()  # objects with executed code

    def copies_of(self, callee: str, obj: str) -> tuple[InlinedCopy, ...]:
        return tuple(c for c in self.copies if c.callee == callee and c.object == obj)

    def calls_of(self, callee: str, obj: str) -> tuple[OutOfLineCall, ...]:
        return tuple(c for c in self.calls if c.callee == callee and c.object == obj)

    def hosts_of(self, function: str, obj: str) -> frozenset[str]:
        """The out-of-line functions whose executed code holds `function` (itself included)."""
        return frozenset(
            {function} | {c.host for c in self.copies if c.caller == function and c.object == obj}
        )


def inline_evidence(
    costs: FunctionCosts,
    instructions: InstructionCosts | None,
    frames: Mapping[str, AddressFrames],
    rename: Callable[[FunctionId], FunctionId],
    identities: Mapping[str, str] | None = None,
) -> InlineEvidence:
    """Inlined copies (from the inline frames of executed instructions) and out-of-line calls
    (from the call graph) of one variant. `costs` and `instructions` are per iteration; `rename`
    maps callgrind's raw ids to the compared ones; `frames` and `identities` are keyed by the
    object paths callgrind reports."""
    renamed = costs.renamed(rename)
    return InlineEvidence(
        copies=_inlined_copies(instructions, frames, rename),
        calls=_out_of_line_calls(renamed),
        described=frozenset(rename(FunctionId("", path)).object for path in frames),
        ran=frozenset(fid.object for fid in renamed.functions),
        identities={
            rename(FunctionId("", path)).object: identity
            for path, identity in (identities or {}).items()
        },
    )


def _inlined_copies(
    instructions: InstructionCosts | None,
    frames: Mapping[str, AddressFrames],
    rename: Callable[[FunctionId], FunctionId],
) -> tuple[InlinedCopy, ...]:
    """Every inlined copy that executed, with the instructions it executed."""
    if instructions is None:
        return ()
    copies: dict[tuple[str, str, str, str, str], float] = {}
    for path, by_address in frames.items():
        obj = rename(FunctionId("", path)).object
        cost_of = _instruction_costs(instructions, path)
        for site, addresses in inline_sites(by_address).items():
            key = (
                rename(FunctionId(site.callee, path)).name,
                rename(FunctionId(site.caller, path)).name,
                obj,
                rename(FunctionId(site.function, path)).name,
                site.location(),
            )
            copies[key] = copies.get(key, 0.0) + sum(cost_of.get(a, 0.0) for a in addresses)
    return tuple(
        InlinedCopy(callee, caller, obj, host, where, cost)
        for (callee, caller, obj, host, where), cost in sorted(copies.items())
        # a statement's costs are its loop's minus the empty loop's: code whose costs
        # cancel out (the worker's own) did not run for the statement
        if callee != caller and cost > 0
    )


def _out_of_line_calls(renamed: FunctionCosts) -> tuple[OutOfLineCall, ...]:
    """The call graph's calls within one object, made at least MIN_CALLS times an iteration."""
    calls: dict[tuple[str, str, str], tuple[float, float]] = {}
    for (caller, callee), call in renamed.calls.items():
        if call.count < MIN_CALLS or caller == callee or caller.object != callee.object:
            continue
        edge = (callee.name, caller.name, caller.object)
        have = calls.get(edge, (0.0, 0.0))
        calls[edge] = (have[0] + call.count, renamed.self_of(callee))
    return tuple(
        OutOfLineCall(callee, caller, obj, count, own)
        for (callee, caller, obj), (count, own) in sorted(calls.items())
    )


def _instruction_costs(instructions: InstructionCosts, path: str) -> dict[int, float]:
    index = instructions.events.index(INSTRUCTIONS_EVENT)
    out: dict[int, float] = {}
    for row in instructions.rows:
        if row.function.object == path:
            out[row.address] = out.get(row.address, 0.0) + row.cost[index]
    return out


@dataclass(frozen=True)
class InliningChange:
    """`function` is inlined into `caller` on one side and called out of line from it on the
    other, as debug info and the call graph show."""

    function: str
    object: str
    change: InliningKind
    caller: str
    call_site: str  # where the inlined copy was (file:line of the call)
    calls: float  # out-of-line calls per iteration, on the side that calls
    self_cost: float  # the out-of-line copy's own cost per iteration
    inlined_cost: float  # instructions per iteration executed in the inlined copy
    evidence: tuple[str, ...]

    def sentence(self) -> str:
        if self.change is InliningKind.OUTLINED:
            return (
                f"`{self.function}` is now outlined: `{self.caller}` calls it "
                f"({_count(self.calls)} calls, {_count(self.self_cost)} instructions) where "
                f"the baseline inlined it at {self.call_site} (debug info)"
            )
        return (
            f"`{self.function}` is now inlined into `{self.caller}` at {self.call_site} "
            f"(debug info), where the baseline called it ({_count(self.calls)} calls, "
            f"{_count(self.self_cost)} instructions)"
        )

    def diagnosis(self) -> Diagnosis:
        claim = Claim.OUTLINED if self.change is InliningKind.OUTLINED else Claim.INLINED
        return Diagnosis(
            claim=claim,
            function=self.function,
            evidence=self.evidence,
            detail={
                "caller": self.caller,
                "object": self.object,
                "call_site": self.call_site,
                # the executed work the claim touches, per iteration: both copies ran
                "inlined_instructions": self.inlined_cost,
                "out_of_line_instructions": self.self_cost,
                "calls": self.calls,
            },
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "object": self.object,
            "change": str(self.change),
            "self": self.self_cost,
            "callers": [{"name": self.caller, "object": self.object, "call_site": self.call_site}],
            "calls": self.calls,
            "inlined_cost": self.inlined_cost,
            "evidence": list(self.evidence),
            "sentence": self.sentence(),
        }


# calls per iteration this close (relative) are one call site's: its callee was replaced
SAME_CALLS = 0.01


@dataclass(frozen=True)
class Replacement:
    """`caller` calls `gone` in the baseline only and `new` in the variant only, as many times
    per iteration (the call graph): the variant calls one in place of the other."""

    gone: str
    new: str
    caller: str
    object: str
    calls: float  # per iteration, the baseline's
    gone_self: float  # each callee's own cost per iteration
    new_self: float

    def diagnosis(self) -> Diagnosis:
        return Diagnosis(
            claim=Claim.CALLEE_CHANGED,
            function=self.caller,
            evidence=(
                f"callgrind's call graph: `{self.caller}` calls `{self.gone}` "
                f"({_count(self.calls)} calls, {_count(self.gone_self)} instructions) in the "
                f"baseline only and `{self.new}` ({_count(self.calls)} calls, "
                f"{_count(self.new_self)} instructions) in the variant only",
            ),
            detail={
                "from": self.gone,
                "to": self.new,
                "caller": self.caller,
                "object": self.object,
                "calls": self.calls,
            },
        )


def replacements(
    base: InlineEvidence, other: InlineEvidence, functions: Sequence[FunctionDelta]
) -> tuple[Replacement, ...]:
    """Each caller that calls exactly one function that ran in the baseline only, and in the
    variant exactly one that ran in the variant only, as many times per iteration (SAME_CALLS)."""
    gone = {(d.function.name, d.function.object) for d in functions if d.presence is _GONE}
    new = {(d.function.name, d.function.object) for d in functions if d.presence is _NEW}

    def by_caller(
        calls: Sequence[OutOfLineCall], alone: set[tuple[str, str]]
    ) -> dict[tuple[str, str], list[OutOfLineCall]]:
        out: dict[tuple[str, str], list[OutOfLineCall]] = {}
        for call in calls:
            if (call.callee, call.object) in alone:
                out.setdefault((call.caller, call.object), []).append(call)
        return out

    before, after = by_caller(base.calls, gone), by_caller(other.calls, new)
    found = []
    for key in sorted(before.keys() & after.keys()):
        if len(before[key]) != 1 or len(after[key]) != 1:
            continue  # which replaced which is not the call graph's to say
        (old,), (replacement,) = before[key], after[key]
        if abs(old.count - replacement.count) > SAME_CALLS * max(old.count, replacement.count):
            continue
        found.append(
            Replacement(
                old.callee,
                replacement.callee,
                old.caller,
                old.object,
                old.count,
                old.callee_self,
                replacement.callee_self,
            )
        )
    return tuple(found)


_GONE, _NEW = Presence.BASELINE_ONLY, Presence.VARIANT_ONLY


def _count(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def _side_change(
    inlined: InlineEvidence,
    called: InlineEvidence,
    kind: InliningKind,
    names: tuple[str, str],
) -> list[InliningChange]:
    """Functions inlined into a caller on the `inlined` side and called out of line from that
    caller (or the function now holding it) on the `called` side. `names` labels the sides
    (the inlined side's first) in the evidence."""
    changes: dict[tuple[str, str, str], InliningChange] = {}
    for copy in inlined.copies:
        obj = copy.object
        if obj not in inlined.described or obj not in called.described:
            continue  # the other side's absence of an inlined copy cannot be told
        same = inlined.identities.get(obj)
        if same is not None and same == called.identities.get(obj):
            continue  # byte-identical code inlines the same way
        if any(c.caller == copy.caller for c in called.copies_of(copy.callee, obj)):
            continue  # still inlined into that caller (perhaps at another call site as well)
        hosts = called.hosts_of(copy.caller, obj) | {copy.host}
        for call in called.calls_of(copy.callee, obj):
            if call.caller not in hosts or (copy.callee, copy.caller, obj) in changes:
                continue
            via = "" if call.caller == copy.caller else f" (holding `{copy.caller}`)"
            evidence = (
                f"DWARF: {copy.callee} inlined into {copy.caller} at {copy.location} "
                f"in {obj} ({names[0]})",
                f"DWARF: no inlined copy of {copy.callee} in {copy.caller} ({names[1]})",
                f"callgrind: {call.caller}{via} calls {copy.callee} out of line, "
                f"{_count(call.count)} calls/iteration ({names[1]})",
            )
            changes[(copy.callee, copy.caller, obj)] = InliningChange(
                function=copy.callee,
                object=obj,
                change=kind,
                caller=copy.caller,
                call_site=copy.location,
                calls=call.count,
                self_cost=call.callee_self,
                inlined_cost=copy.cost,
                evidence=evidence,
            )
    return list(changes.values())


def inlining_changes(
    baseline: InlineEvidence, variant: InlineEvidence
) -> tuple[InliningChange, ...]:
    """Functions now outlined (inlined into a caller in the baseline, called out of line from it
    in the variant) or now inlined (the other way round), from debug info only. One change per
    (function, caller); a function inlined at one call site and called at another of the same
    caller on the same side makes no claim. Objects byte-identical on both sides make none."""
    outlined = _side_change(baseline, variant, InliningKind.OUTLINED, ("baseline", "variant"))
    inlined = _side_change(variant, baseline, InliningKind.INLINED, ("variant", "baseline"))
    changes = outlined + inlined
    changes.sort(key=lambda c: (-max(c.self_cost, c.inlined_cost), c.function, c.caller))
    return tuple(changes)


@dataclass(frozen=True)
class CannotTell:
    """Functions that ran out of line in one variant only, in an object without debug info on
    some side: whether they were inlined or outlined cannot be told, and is not guessed."""

    object: str
    functions: tuple[str, ...]

    def message(self) -> str:
        shown = ", ".join(f"`{f}`" for f in self.functions[:5])
        more = f" and {len(self.functions) - 5} more" if len(self.functions) > 5 else ""
        return (
            f"cannot tell whether {shown}{more} (run out of line in one variant only) were "
            f"inlined or outlined: no debug info for {self.object} (build with -g)"
        )

    def to_json(self) -> dict[str, Any]:
        return {"object": self.object, "functions": list(self.functions), "note": self.message()}


def cannot_tell(
    deltas: Sequence[FunctionDelta],
    baseline: InlineEvidence,
    variant: InlineEvidence,
    changes: Sequence[InliningChange],
    *,
    min_cost: float = 0.0,
) -> tuple[CannotTell, ...]:
    """Where the call graph changed (a function ran out of line on one side only) but debug info
    is missing on a side, so no inlining claim can be made. Byte-identical objects are left out:
    their code is the same, only the path through it changed."""
    explained = {(c.function, c.object) for c in changes}
    by_object: dict[str, list[str]] = {}
    for delta in deltas:
        if (
            delta.presence is Presence.BOTH
            or max(delta.baseline_self, delta.variant_self) < min_cost
        ):
            continue
        obj = delta.object
        if (delta.name, obj) in explained:
            continue
        if obj not in baseline.ran or obj not in variant.ran:
            continue  # another library altogether (libpython3.11 vs 3.12): not inlining
        same = baseline.identities.get(obj)
        if same is not None and same == variant.identities.get(obj):
            continue
        if obj in baseline.described and obj in variant.described:
            continue
        by_object.setdefault(obj, []).append(delta.name)
    return tuple(CannotTell(obj, tuple(names)) for obj, names in sorted(by_object.items()))


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


def reattribute_inlined(
    instructions: InstructionCosts, frames: Mapping[str, AddressFrames]
) -> FunctionCosts:
    """Self costs with each instruction charged to the innermost function its debug info names.

    Instructions of objects without frames keep callgrind's attribution. The result has no
    call edges: inclusive costs of this view equal self costs."""
    # each function's file (its first row's) and costs summed in row order, the records built
    # once at the end: there is a row per executed instruction, too many for a record each
    sums: dict[FunctionId, tuple[str, list[float]]] = {}
    no_frames: AddressFrames = {}
    for row in instructions.rows:
        obj = row.function.object
        chain = frames.get(obj, no_frames).get(row.address)
        fid = FunctionId(chain[0].function, obj) if chain else row.function
        have = sums.get(fid)
        if have is None:
            sums[fid] = (row.file, list(row.cost))
        else:
            total = have[1]
            if len(total) != len(row.cost):
                raise ValueError("rows of one profile with different numbers of events")
            for i, value in enumerate(row.cost):
                total[i] += value
    functions = {fid: FunctionCost(fid, file, tuple(total)) for fid, (file, total) in sums.items()}
    return FunctionCosts(instructions.events, MappingProxyType(functions), MappingProxyType({}))
