"""Inlined instructions re-attributed to the function they came from."""

from __future__ import annotations

from perflab.lenses.instructions.evidence import reattribute_inlined
from perflab.tool_output.callgrind import (
    FunctionId,
    InstructionCost,
    InstructionCosts,
)
from tests.support.inline_frames import HELPER, KERNEL, KERNEL_CALLING

SUBJECT = "perflab.lenses.instructions.evidence"


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
