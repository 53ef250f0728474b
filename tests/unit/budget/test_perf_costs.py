"""The shape of the shared call-graph recording (budget/perf_costs.py): the ways it is read back
and the figures the cost models and measure/perf record by."""

from __future__ import annotations

from perflab.budget.perf_costs import (
    CALL_GRAPH_COMMAND_RUNS,
    CALL_GRAPH_PROCESSES,
    CALL_GRAPH_RECORDING,
    CALL_GRAPH_REGION_S,
    Reading,
)


def test_call_graphs_are_read_with_stacks_for_people_and_leaves_as_the_symbol_table_says() -> None:
    assert Reading.CALL_GRAPHS.stacks and Reading.CALL_GRAPHS.demangle
    assert not Reading.LEAVES.stacks and not Reading.LEAVES.demangle


def test_a_reading_is_known_by_its_stored_value() -> None:
    assert {Reading(r.value) for r in Reading} == set(Reading)


def test_the_recording_is_long_enough_and_in_processes_enough_to_tell_one_off_work() -> None:
    assert CALL_GRAPH_PROCESSES >= 2  # a function must be there in every process, not one
    assert CALL_GRAPH_REGION_S > 0 and CALL_GRAPH_COMMAND_RUNS >= 1 and CALL_GRAPH_RECORDING
