"""Callgrind's costs as values: names and objects normalised; costs that subtract, scale, filter
and merge clones; derived events."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from perflab.tool_output.callgrind import (
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
from tests.support.callgrind_texts import costs


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


def test_scaling_by_one_is_the_value_itself_and_by_another_factor_each_cost() -> None:
    fid = FunctionId("f", "o")
    rows = InstructionCosts(("Ir",), (InstructionCost(fid, 0x10, "f.c", 1, (3.0,)),))
    per_call = costs({"main": 10, "kernel": 100}, {("main", "kernel"): 100})
    assert rows.scaled(1.0) is rows
    assert per_call.scaled(1.0) is per_call
    assert rows.scaled(0.5).rows[0].cost == (1.5,)
    assert per_call.scaled(0.5).total() == 55.0
