"""The callgrind values analysed fast: call indexes built once per value, instruction rows
scaled and subtracted without per-row replace(), and the same answers as before."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from perflab.lenses.instructions.counts import instructions_difference
from perflab.tool_output.callgrind import (
    CallCost,
    CallgrindPart,
    FunctionCost,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
)

MAIN = FunctionId("main", "prog")
KERNEL = FunctionId("kernel", "prog")
HELPER = FunctionId("helper", "libm.so")
RECURSE = FunctionId("recurse", "prog")


def _costs() -> FunctionCosts:
    functions = {
        MAIN: FunctionCost(MAIN, "main.c", (10.0, 1.0)),
        KERNEL: FunctionCost(KERNEL, "k.c", (100.0, 20.0)),
        HELPER: FunctionCost(HELPER, "h.c", (40.0, 4.0)),
        RECURSE: FunctionCost(RECURSE, "r.c", (7.0, 0.0)),
    }
    calls = [
        CallCost(MAIN, KERNEL, 2.0, (140.0, 24.0)),
        CallCost(MAIN, RECURSE, 1.0, (7.0, 0.0)),
        CallCost(KERNEL, HELPER, 5.0, (40.0, 4.0)),
        CallCost(RECURSE, RECURSE, 3.0, (5.0, 0.0)),  # direct recursion: not added again
    ]
    return FunctionCosts(
        ("Ir", "Dr"),
        MappingProxyType(functions),
        MappingProxyType({(c.caller, c.callee): c for c in calls}),
    )


def _inclusive_by_hand(costs: FunctionCosts, fid: FunctionId, event: str) -> float:
    """The rule inclusive_of states, computed straight from the edges (no index)."""
    index = costs.events.index(event)
    own = costs.functions[fid].self_cost[index] if fid in costs.functions else 0.0
    return own + sum(
        c.inclusive[index] for c in costs.calls.values() if c.caller == fid and c.callee != fid
    )


def test_repeated_queries_build_each_index_once_and_answer_as_before() -> None:
    costs = _costs()
    functions = (MAIN, KERNEL, HELPER, RECURSE, FunctionId("absent", "prog"))
    # the index's own tuples: an index built again would answer with new ones
    callees = {fid: costs.callees_of(fid) for fid in functions}
    callers = {fid: costs.callers_of(fid) for fid in functions}
    for _ in range(50):
        for fid in functions:
            for event in costs.events:
                assert costs.inclusive_of(fid, event) == _inclusive_by_hand(costs, fid, event)
            assert costs.callees_of(fid) is callees[fid]
            assert costs.callers_of(fid) is callers[fid]
    assert [c.caller for c in costs.callers_of(HELPER)] == [KERNEL]
    assert costs.inclusive_of(MAIN) == 157.0
    assert costs.inclusive_of(RECURSE) == 7.0


def test_each_derived_value_indexes_its_own_calls() -> None:
    costs = _costs()
    assert costs.inclusive_of(MAIN) == 157.0  # builds (and caches) this value's index
    halved = costs.scaled(0.5)
    assert halved.inclusive_of(MAIN) == 78.5
    diff = (halved - costs).without_zero()
    assert diff.inclusive_of(KERNEL) == _inclusive_by_hand(diff, KERNEL, "Ir") == -70.0
    renamed = costs.renamed(lambda fid: MAIN if fid == KERNEL else fid)
    assert [c.callee for c in renamed.callees_of(MAIN)] == [MAIN, RECURSE, HELPER]
    assert renamed.inclusive_of(MAIN) == _inclusive_by_hand(renamed, MAIN, "Ir")
    # the cache is not part of the value: equal values stay equal, whatever was queried
    assert costs == _costs()


def test_scaled_instruction_costs_scale_only_the_costs() -> None:
    rows = (
        InstructionCost(KERNEL, 0x1130, "k.c", 12, (40.0, 8.0)),
        InstructionCost(HELPER, 0x2200, "h.c", 3, (6.0, 0.0)),
    )
    scaled = InstructionCosts(("Ir", "Dr"), rows).scaled(0.25)
    assert scaled == InstructionCosts(
        ("Ir", "Dr"), tuple(replace(row, cost=tuple(x / 4 for x in row.cost)) for row in rows)
    )


def _part(*rows: InstructionCost) -> CallgrindPart:
    events = ("Ir", "Dr")
    return CallgrindPart(
        number=None,
        trigger=None,
        positions=("instr", "line"),
        events=events,
        descriptions=MappingProxyType({}),
        totals=None,
        summary=None,
        costs=FunctionCosts(events),
        instructions=InstructionCosts(events, rows),
    )


def test_statement_minus_empty_loop_sums_per_instruction_and_drops_what_cancels() -> None:
    def row(fid: FunctionId, address: int, line: int, *cost: float) -> InstructionCost:
        return InstructionCost(fid, address, f"{fid.name}.c", line, cost)

    statement = [
        _part(row(KERNEL, 0x10, 1, 30.0, 3.0), row(MAIN, 0x20, 2, 5.0, 0.0)),
        _part(row(KERNEL, 0x10, 9, 10.0, 1.0), row(HELPER, 0x30, 3, 4.0, 4.0)),
    ]
    empty = [_part(row(MAIN, 0x20, 7, 5.0, 0.0), row(KERNEL, 0x10, 8, 1.0, 0.0))]
    empty.append(_part(row(RECURSE, 0x40, 4, 2.0, 0.0)))
    difference = instructions_difference(statement, empty)
    assert difference == InstructionCosts(
        ("Ir", "Dr"),
        (
            row(KERNEL, 0x10, 1, 39.0, 4.0),  # the first row's file and line, costs summed
            row(HELPER, 0x30, 3, 4.0, 4.0),
            row(RECURSE, 0x40, 4, -2.0, -0.0),  # only in the empty loop
        ),  # main's instruction cancelled out
    )
