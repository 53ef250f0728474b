"""Claims from two variants' inline evidence: functions now inlined or outlined, callees a
caller replaced, and where missing debug info leaves a change that cannot be told.

Inlining breaks naive per-function deltas: when the compiler stops inlining `helper` into
`kernel`, the table shows `helper +N` and `kernel -M`. Arithmetic on those deltas both invents
inlining (a function that merely stopped running) and misses it (a tiny helper whose call
overhead is as large as its body: the caller does not shrink by the helper's cost). So an
inlining change is claimed only from evidence: DWARF inline frames of the executed instructions
show the helper's code inlined into a caller on one side, and the call graph shows that caller
calling an out-of-line copy on the other (`inlining_changes`). `evidence.reattribute_inlined`
charges each instruction to the inlined function its debug info names, so the table shows the
real change (the call overhead).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.instructions.evidence import InlineEvidence, OutOfLineCall
from perflab.lenses.instructions.explain import FunctionDelta
from perflab.records.accounting import Presence
from perflab.records.diagnosis import Claim, Diagnosis


class InliningKind(enum.StrEnum):
    """Which way a function's inlining into a caller changed between the variants."""

    OUTLINED = "outlined"  # a call now exists where the body used to be inlined
    INLINED = "inlined"  # the body is now inlined where a call used to be


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


@dataclass(frozen=True, kw_only=True)
class ReplacedCall:
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
) -> tuple[ReplacedCall, ...]:
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
            ReplacedCall(
                gone=old.callee,
                new=replacement.callee,
                caller=old.caller,
                object=old.object,
                calls=old.count,
                gone_self=old.callee_self,
                new_self=replacement.callee_self,
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
