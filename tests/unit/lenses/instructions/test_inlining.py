"""Names, value operations, deltas, inlining detection, layers and inline re-attribution."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

import pytest

from perflab.lenses.instructions.evidence import (
    InlineEvidence,
    OutOfLineCall,
    inline_evidence,
    reattribute_inlined,
)
from perflab.lenses.instructions.explain import (
    FunctionDelta,
    function_deltas,
    unqualified_signature_base,
)
from perflab.lenses.instructions.inlining import (
    InliningKind,
    cannot_tell,
    inlining_changes,
    replacements,
)
from perflab.lenses.instructions.layers import LayerRule, compile_layers, layer_deltas
from perflab.records.accounting import Presence
from perflab.records.diagnosis import Claim
from perflab.tool_drivers.debuginfo import SourceFrame
from perflab.tool_output.callgrind import (
    CallCost,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
    derived_event,
    function_parts,
    mangled_names,
    normalise_function_id,
    normalise_function_name,
    normalise_object,
)


def costs(
    selfs: dict[str, float], calls: dict[tuple[str, str], float] | None = None, obj: str = "prog"
) -> FunctionCosts:
    """Costs of one event; a call's inclusive cost is the callee's self cost times 1."""
    functions = {
        FunctionId(n, obj): FunctionCost(FunctionId(n, obj), "a.c", (v,)) for n, v in selfs.items()
    }
    edges = {}
    for (caller, callee), count in (calls or {}).items():
        key = (FunctionId(caller, obj), FunctionId(callee, obj))
        edges[key] = CallCost(key[0], key[1], count, (selfs[callee],))
    return FunctionCosts(("Ir",), MappingProxyType(functions), MappingProxyType(edges))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("kernel.constprop.0", "kernel"),
        ("kernel.isra.3", "kernel"),
        ("kernel.part.1", "kernel"),
        ("kernel.cold", "kernel"),
        ("kernel.cold.12", "kernel"),
        ("kernel.lto_priv.0", "kernel"),
        ("kernel.isra.0.constprop.2", "kernel"),
        ("kernel.part.0.cold", "kernel"),
        ("KernelFunction::isValid() const [clone .isra.0]", "KernelFunction::isValid() const"),
        ("KernelFunction::isValid() const (.isra.0)", "KernelFunction::isValid() const"),
        ("at_add(long, long) [clone .constprop.0] [clone .cold]", "at_add(long, long)"),
        ("operator()(int) const", "operator()(int) const"),
        ("list_append'2", "list_append"),
        ("0x0000000000401234", "[unknown]"),
        ("at::add_kernel(at::TensorIterator&)", "at::add_kernel(at::TensorIterator&)"),
        ("memcpy@@GLIBC_2.14", "memcpy@@GLIBC_2.14"),
    ],
)
def test_function_names_are_normalised(raw: str, expected: str) -> None:
    assert normalise_function_name(raw) == expected


def test_demangling_uses_the_given_table_and_mangled_names_are_found() -> None:
    table = {"_ZN2at6native3addEv": "at::native::add()"}
    assert normalise_function_name("_ZN2at6native3addEv.constprop.0", table) == "at::native::add()"
    assert mangled_names(costs({"_ZN2at3fooEv'2": 1, "main": 1})) == ("_ZN2at3fooEv",)


def test_objects_are_compared_by_basename() -> None:
    assert normalise_object("/envs/after/lib/libtorch_cpu.so") == "libtorch_cpu.so"
    assert normalise_object("???") == "???"


def test_costs_subtract_scale_filter_and_merge_clones() -> None:
    before = costs({"main": 10, "kernel": 100}, {("main", "kernel"): 1})
    after = costs({"main": 10, "kernel": 80, "kernel.cold": 5}, {("main", "kernel"): 1})
    delta = (after - before).without_zero()
    assert {f.name: c.self_cost[0] for f, c in delta.functions.items()} == {
        "kernel": -20.0,
        "kernel.cold": 5.0,
    }
    per_iteration = after.scaled(0.5)
    assert per_iteration.total() == 47.5
    edge = (FunctionId("main", "prog"), FunctionId("kernel", "prog"))
    assert per_iteration.calls[edge].count == 0.5
    merged = after.normalised()
    assert merged.self_of(FunctionId("kernel", "prog")) == 85
    assert merged.inclusive_of(FunctionId("main", "prog")) == 90
    only_kernel = after.filtered(lambda c: c.name.startswith("kernel"))
    assert only_kernel.total() == 85
    assert not only_kernel.calls
    with pytest.raises(ValueError, match="cannot combine"):
        _ = after - derived_event(after, "x", ["Ir"])


def test_derived_event_sums_components() -> None:
    fid = FunctionId("f", "o")
    cost = FunctionCosts(
        ("Ir", "D1mr", "D1mw"), MappingProxyType({fid: FunctionCost(fid, "f.c", (9.0, 2.0, 3.0))})
    )
    assert derived_event(cost, "D1_misses", ["D1mr", "D1mw"]).total("D1_misses") == 5


def test_deltas_are_sorted_by_absolute_self_delta_with_presence() -> None:
    before = costs({"main": 10, "kernel": 100, "gone": 3})
    after = costs({"main": 12, "kernel": 50, "new": 7})
    deltas = function_deltas(before, after)
    assert [(d.name, d.delta_self, d.presence) for d in deltas] == [
        ("kernel", -50.0, Presence.BOTH),
        ("new", 7.0, Presence.VARIANT_ONLY),
        ("gone", -3.0, Presence.BASELINE_ONLY),
        ("main", 2.0, Presence.BOTH),
    ]


def _rows(obj: str, costs_by_address: dict[int, tuple[str, float]]) -> InstructionCosts:
    return InstructionCosts(
        ("Ir",),
        tuple(
            InstructionCost(FunctionId(fn, obj), address, "k.c", 1, (cost,))
            for address, (fn, cost) in costs_by_address.items()
        ),
    )


KERNEL = SourceFrame("kernel", "/s/k.c", 4)
KERNEL_CALLING = SourceFrame("kernel", "/s/k.c", 5)
HELPER = SourceFrame("helper", "/s/h.h", 2)


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


def test_clone_parts_are_listed_and_overloads_whose_signature_changed_pair_up() -> None:
    after = costs({"kernel": 80, "kernel.cold": 5, "kernel'2": 1})
    parts = function_parts(after, normalise_function_id)
    assert parts == {FunctionId("kernel", "prog"): ("kernel", "kernel.cold")}
    before = costs({"at_add(long, long, long)": 100, "main": 5})
    changed = costs({"at_add(long, long)": 90, "main": 5})
    (row, _) = function_deltas(before, changed)
    assert (row.name, row.baseline_name, row.presence) == (
        "at_add(long, long)",
        "at_add(long, long, long)",
        Presence.BOTH,
    )
    assert row.delta_self == -10
    two = costs({"at_add(long, long)": 90, "at_add(int, int)": 1, "main": 5})
    assert len(function_deltas(before, two)) == 4  # ambiguous: no pairing
    assert unqualified_signature_base("ns::S::f(int) const &") == "ns::S::f"
    assert unqualified_signature_base("operator()(int)") == "operator()"
    assert unqualified_signature_base("main") is None


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


def test_reattribution_charges_inlined_instructions_to_the_inlined_function() -> None:
    kernel = FunctionId("kernel", "/b/prog")
    rows = (
        InstructionCost(kernel, 0x10, "k.c", 1, (4.0,)),
        InstructionCost(kernel, 0x14, "h.h", 2, (6.0,)),
        InstructionCost(FunctionId("memcpy", "/lib/libc.so.6"), 0x99, "???", 0, (3.0,)),
    )
    frames = {"/b/prog": {0x10: (KERNEL,), 0x14: (HELPER, KERNEL_CALLING)}}
    view = reattribute_inlined(InstructionCosts(("Ir",), rows), frames)
    assert {f.name: c.self_cost[0] for f, c in view.functions.items()} == {
        "kernel": 4.0,
        "helper": 6.0,
        "memcpy": 3.0,
    }


def test_a_function_two_builds_spell_differently_is_one_row_saying_why() -> None:
    """Callgrind keeps a Rust hash where its demangler left the name half read (a `.llvm.`
    suffix): the two builds' hashes differ, the function is one row, named as in the baseline,
    with the variant's spelling and the reason in its JSON."""
    from perflab.lenses.instructions.analyse import function_table
    from perflab.lenses.instructions.counts import VariantCounts
    from perflab.lenses.instructions.details import function_json
    from perflab.lenses.instructions.pairing import respelled

    a, b = "spec_next::h680aaf5d04044e1f", "spec_next::h0123456789abcdef"
    base = VariantCounts((1.0,), {}, costs({a: 100, "main": 5}), None)
    other = respelled(base, VariantCounts((1.0,), {}, costs({b: 40, "main": 5}), None))
    rows, _ = function_table(base, other)
    (row,) = [r for r in rows if r.name != "main"]
    assert (row.name, row.presence, row.delta_self) == (a, Presence.BOTH, -60)
    spelled = function_json(row)["spelled_in_variant"]
    assert spelled["name"] == b and "the only function named spec_next" in spelled["why"]
    # two of one stem in a build: nothing is guessed, both stay apart
    two = respelled(base, VariantCounts((1.0,), {}, costs({b: 40, b[:-1] + "0": 1}), None))
    assert len(function_table(base, two)[0]) == 4


def test_the_inline_aware_table_is_paired_by_its_own_spellings() -> None:
    """Callgrind's demangler leaves out Rust's hash, the debug info's names keep it: each
    table is paired with its own kind, so neither makes the other look like two functions."""
    from perflab.lenses.instructions.analyse import function_table
    from perflab.lenses.instructions.counts import VariantCounts
    from perflab.lenses.instructions.pairing import respelled

    a, b = "sumbench::sum_slice::h5ce9dbc58b2415ea", "sumbench::sum_slice::h74f3f68197f7d97c"
    plain = "sumbench::sum_slice"
    base = VariantCounts((1.0,), {}, costs({plain: 100}), costs({a: 100}))
    other = respelled(base, VariantCounts((1.0,), {}, costs({plain: 40}), costs({b: 40})))
    rows, attribution = function_table(base, other)
    assert attribution == "inline-aware"
    assert [(r.name, r.presence) for r in rows] == [(a, Presence.BOTH)]


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


def test_reattribution_sums_every_event_in_row_order_under_the_first_rows_file() -> None:
    kernel = FunctionId("kernel", "/b/prog")
    rows = (
        InstructionCost(kernel, 0x10, "k.c", 1, (0.1, 1.0)),
        InstructionCost(kernel, 0x14, "h.h", 2, (0.2, 2.0)),
        InstructionCost(kernel, 0x18, "k.c", 3, (0.3, 3.0)),
    )
    view = reattribute_inlined(InstructionCosts(("Ir", "Dr"), rows), {})
    cost = view.functions[kernel]
    assert cost.file == "k.c"
    assert cost.self_cost == ((0.1 + 0.2) + 0.3, 6.0)  # the order of the rows, bit for bit
    assert not view.calls


def test_scaling_by_one_is_the_value_itself_and_by_another_factor_each_cost() -> None:
    fid = FunctionId("f", "o")
    rows = InstructionCosts(("Ir",), (InstructionCost(fid, 0x10, "f.c", 1, (3.0,)),))
    per_call = costs({"main": 10, "kernel": 100}, {("main", "kernel"): 100})
    assert rows.scaled(1.0) is rows
    assert per_call.scaled(1.0) is per_call
    assert rows.scaled(0.5).rows[0].cost == (1.5,)
    assert per_call.scaled(0.5).total() == 55.0
