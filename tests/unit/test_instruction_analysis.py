"""Names, value operations, deltas, inlining detection, layers and inline re-attribution."""

from __future__ import annotations

import re
from types import MappingProxyType

import pytest

from perflab.lenses.instructions.analyse import (
    InliningKind,
    LayerRule,
    Presence,
    compile_layers,
    function_deltas,
    inlining_changes,
    layer_deltas,
    parse_addr2line,
    parse_symbolizer_json,
    reattribute_inlined,
)
from perflab.lenses.instructions.callgrind import (
    CallCost,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
    derived_event,
    mangled_names,
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


def test_outlining_is_detected_when_the_caller_moves_by_about_the_opposite_amount() -> None:
    inlined = costs({"main": 5, "kernel": 1000})
    outlined = costs({"main": 5, "kernel": 250, "helper": 800}, {("kernel", "helper"): 100})
    (change,) = inlining_changes(inlined, outlined)
    assert change.function == FunctionId("helper", "prog")
    assert change.change is InliningKind.OUTLINED
    assert change.callers_delta == -750
    assert change.sentence() == "`helper` is now outlined: +800 self; its caller `kernel` \u2212750"
    (back,) = inlining_changes(outlined, inlined)
    assert back.change is InliningKind.INLINED
    assert back.sentence() == "`helper` is now inlined: -800 self; its caller `kernel` +750"


def test_a_new_function_without_a_compensating_caller_is_not_an_inlining_change() -> None:
    before = costs({"kernel": 1000})
    after = costs({"kernel": 1000, "logging": 800}, {("kernel", "logging"): 1})
    assert inlining_changes(before, after) == ()
    tiny = costs({"k": 9, "h": 1}, {("k", "h"): 1})
    assert inlining_changes(costs({"k": 10}), tiny, min_cost=2) == ()


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
    frames = {"/b/prog": {0x10: ("kernel",), 0x14: ("helper", "kernel")}}
    view = reattribute_inlined(InstructionCosts(("Ir",), rows), frames)
    assert {f.name: c.self_cost[0] for f, c in view.functions.items()} == {
        "kernel": 4.0,
        "helper": 6.0,
        "memcpy": 3.0,
    }


def test_symbolizer_outputs_are_parsed_innermost_first() -> None:
    json_text = (
        '{"Address":"0x1149","ModuleName":"p","Symbol":[{"FunctionName":"helper","Line":2},'
        '{"FunctionName":"kernel","Line":5}]}\n'
        '{"Address":"0x2000","ModuleName":"p","Symbol":[{"FunctionName":"??","Line":0}]}\n'
    )
    assert parse_symbolizer_json(json_text) == {0x1149: ("helper", "kernel")}
    addr2line_text = (
        "0x0000000000001149\nhelper\n/s/h.h:2\nkernel\n/s/k.c:5\n0x0000000000002000\n??\n??:0\n"
    )
    assert parse_addr2line(addr2line_text, [0x1149, 0x2000]) == {0x1149: ("helper", "kernel")}
