"""Inlining detection: what was inlined or outlined, from DWARF, and what cannot be told."""

from __future__ import annotations

from typing import Any

from perflab.lenses.instructions.evidence import (
    InlineEvidence,
    OutOfLineCall,
    inline_evidence,
)
from perflab.lenses.instructions.explain import (
    FunctionDelta,
    function_deltas,
)
from perflab.lenses.instructions.inlining import (
    InliningKind,
    cannot_tell,
    inlining_changes,
    replacements,
)
from perflab.records.accounting import Presence
from perflab.records.diagnosis import Claim
from perflab.tool_drivers.debuginfo import SourceFrame
from perflab.tool_output.callgrind import (
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
    normalise_function_id,
)
from tests.support.callgrind_texts import costs
from tests.support.inline_frames import HELPER, KERNEL, KERNEL_CALLING


def _rows(obj: str, costs_by_address: dict[int, tuple[str, float]]) -> InstructionCosts:
    return InstructionCosts(
        ("Ir",),
        tuple(
            InstructionCost(FunctionId(fn, obj), address, "k.c", 1, (cost,))
            for address, (fn, cost) in costs_by_address.items()
        ),
    )


Side = tuple[FunctionCosts, InstructionCosts, dict[str, Any]]


def _inlined_side(identity: str = "build-id:aa") -> Side:
    """kernel with helper's code inlined at k.c:5 (addresses 0x14, 0x18)."""
    obj = "/b1/prog"
    selfs = costs({"main": 5, "kernel": 1000}, {("main", "kernel"): 1}, obj=obj)
    rows = _rows(obj, {0x10: ("kernel", 200), 0x14: ("kernel", 400), 0x18: ("kernel", 400)})
    frames = {
        obj: {0x10: (KERNEL,), 0x14: (HELPER, KERNEL_CALLING), 0x18: (HELPER, KERNEL_CALLING)}
    }
    return selfs, rows, {"frames": frames, "identities": {obj: identity}}


def _called_side(identity: str = "build-id:bb") -> Side:
    """kernel calling an out-of-line clone `helper.isra.0` 100 times (the helper costs 8 per
    call: a call as big as its body makes the caller shrink by much less than the helper)."""
    obj = "/b2/prog"
    selfs = costs(
        {"main": 5, "kernel": 950, "helper.isra.0": 800},
        {("main", "kernel"): 1, ("kernel", "helper.isra.0"): 100},
        obj=obj,
    )
    rows = _rows(obj, {0x10: ("kernel", 950), 0x40: ("helper.isra.0", 800)})
    frames = {obj: {0x10: (KERNEL,), 0x40: (SourceFrame("helper (.isra.0)", "/s/h.h", 2),)}}
    return selfs, rows, {"frames": frames, "identities": {obj: identity}}


def _evidence(side: Side, *, frames: bool = True) -> InlineEvidence:
    selfs, rows, facts = side
    return inline_evidence(
        selfs,
        rows,
        facts["frames"] if frames else {},
        normalise_function_id,
        facts["identities"],
    )


def test_outlining_is_claimed_from_dwarf_whatever_the_caller_change() -> None:
    inlined, called = _evidence(_inlined_side()), _evidence(_called_side())
    (change,) = inlining_changes(inlined, called)
    assert (change.function, change.change, change.caller) == (
        "helper",
        InliningKind.OUTLINED,
        "kernel",
    )
    assert change.call_site == "k.c:5" and change.calls == 100 and change.inlined_cost == 800
    assert change.evidence[0] == "DWARF: helper inlined into kernel at k.c:5 in prog (baseline)"
    assert "calls helper out of line, 100 calls/iteration (variant)" in change.evidence[2]
    diagnosis = change.diagnosis().to_json()
    assert diagnosis["claim"] == "outlined" and diagnosis["function"] == "helper"
    assert diagnosis["evidence"] == list(change.evidence)
    (back,) = inlining_changes(called, inlined)
    assert back.change is InliningKind.INLINED and back.diagnosis().claim is Claim.INLINED
    assert back.sentence().startswith("`helper` is now inlined into `kernel` at k.c:5")


def test_no_claim_between_byte_identical_objects_or_without_debug_info() -> None:
    same_a = _evidence(_inlined_side("build-id:same"))
    same_b = _evidence(_called_side("build-id:same"))
    assert inlining_changes(same_a, same_b) == ()
    blind = _evidence(_called_side(), frames=False)
    assert inlining_changes(_evidence(_inlined_side()), blind) == ()
    # ... and without debug info the lens says it cannot tell, naming the object
    before, after = _inlined_side()[0], _called_side()[0]
    deltas = function_deltas(before.normalised(), after.normalised())
    (unknown,) = cannot_tell(deltas, _evidence(_inlined_side()), blind, ())
    assert unknown.functions == ("helper",)
    assert "no debug info for prog (build with -g)" in unknown.message()
    # byte-identical objects get no note either: the path through the same code changed
    assert (
        cannot_tell(deltas, same_a, _evidence(_called_side("build-id:same"), frames=False), ())
        == ()
    )


def test_another_library_altogether_is_no_inlining_question() -> None:
    old = costs({"PyList_Append": 50}, obj="/p/libpython3.11.so.1.0")
    new = costs({"PyList_Append": 40, "_PyList_AppendTakeRef": 9}, obj="/p/libpython3.12.so.1.0")
    before = inline_evidence(old, None, {}, normalise_function_id)
    after = inline_evidence(new, None, {}, normalise_function_id)
    deltas = function_deltas(old.normalised(), new.normalised())
    assert cannot_tell(deltas, before, after, ()) == ()


def test_a_function_that_merely_started_running_is_no_inlining_change() -> None:
    obj = "/b/prog"
    base = costs({"kernel": 1000}, obj=obj)
    new = costs({"kernel": 200, "logging": 800}, {("kernel", "logging"): 1}, obj=obj)
    frames = {obj: {0x10: (KERNEL,)}}
    rows = _rows(obj, {0x10: ("kernel", 1000)})
    before = inline_evidence(base, rows, frames, normalise_function_id, {obj: "sha256:1"})
    after = inline_evidence(new, rows, frames, normalise_function_id, {obj: "sha256:2"})
    assert inlining_changes(before, after) == ()


def _deltas(*rows: tuple[str, str]) -> list[FunctionDelta]:
    return [_delta(name, presence) for name, presence in rows]


def _delta(name: str, presence: str) -> FunctionDelta:
    costs = {"baseline_only": (100.0, 0.0), "variant_only": (0.0, 70.0), "both": (5.0, 5.0)}
    baseline, variant = costs[presence]
    return FunctionDelta(
        function=FunctionId(name, "prog"),
        file="",
        baseline_self=baseline,
        variant_self=variant,
        baseline_inclusive=baseline,
        variant_inclusive=variant,
        presence=Presence(presence),
    )


def test_a_caller_calling_another_function_as_often_is_a_replacement() -> None:
    functions = _deltas(("old", "baseline_only"), ("new", "variant_only"), ("main", "both"))
    base = InlineEvidence(calls=(OutOfLineCall("old", "main", "prog", 2.0, 100.0),))
    other = InlineEvidence(calls=(OutOfLineCall("new", "main", "prog", 2.0, 70.0),))
    (found,) = replacements(base, other, functions)
    assert (found.gone, found.new, found.caller, found.calls) == ("old", "new", "main", 2.0)
    diagnosis = found.diagnosis().to_json()
    assert diagnosis["claim"] == "callee_changed" and diagnosis["function"] == "main"
    assert diagnosis["detail"]["from"] == "old" and diagnosis["detail"]["to"] == "new"
    # called a different number of times: another call site's work, not a replacement
    other = InlineEvidence(calls=(OutOfLineCall("new", "main", "prog", 3.0, 70.0),))
    assert replacements(base, other, functions) == ()
    # two gone from one caller: which one the new replaced is not the call graph's to say
    functions += _deltas(("older", "baseline_only"))
    base = InlineEvidence(calls=(*base.calls, OutOfLineCall("older", "main", "prog", 2.0, 9.0)))
    other = InlineEvidence(calls=(OutOfLineCall("new", "main", "prog", 2.0, 70.0),))
    assert replacements(base, other, functions) == ()
