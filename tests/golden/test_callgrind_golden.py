"""The callgrind parser on hand-written files that exercise every format feature we rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.tool_output.callgrind import FunctionId
from perflab.tool_output.callgrind_format import CallgrindFormatError, parse_callgrind

DATA = Path(__file__).parent / "data" / "callgrind"


def load(name: str) -> str:
    return (DATA / name).read_text()


def test_name_compression_shares_ids_between_fl_and_cfi_and_between_fn_and_cfn() -> None:
    profile = parse_callgrind(load("compressed.out"))
    assert profile.command == "./prog --fast"
    assert profile.pid == 4242
    assert profile.creator == "hand-written"
    (part,) = profile.parts
    costs = part.costs
    main = FunctionId("main", "/build/a/prog")
    func1 = FunctionId("func1", "/build/a/prog")
    func2 = FunctionId("func2", "/build/a/prog")
    assert {fid: c.self_cost for fid, c in costs.functions.items()} == {
        main: (20.0,),
        func1: (100.0,),
        func2: (700.0,),
    }
    assert costs.functions[func2].file == "/src/file2.c"
    # the manual's figures: main's inclusive cost is 820 (20 + 400 + 400)
    assert costs.inclusive_of(main) == 820
    assert costs.inclusive_of(func1) == 400
    assert costs.calls[(main, func2)].count == 3
    assert costs.calls[(func1, func2)].count == 2
    assert [c.caller for c in costs.callers_of(func2)] == [main, func1]
    assert part.totals == (820,)
    assert costs.total() == 820


def test_instruction_positions_relative_subpositions_events_jumps_and_calls() -> None:
    (part,) = parse_callgrind(load("instr.out")).parts
    assert part.positions == ("instr", "line")
    assert part.events == ("Ir", "Dr", "Dw")
    assert part.trigger == "Program termination"
    assert part.descriptions["I1 cache"].startswith("32768 B")
    costs = part.costs
    kernel = FunctionId("kernel", "/opt/build/bin/tool")
    cold = FunctionId("kernel.cold", "/opt/build/bin/tool")
    sin = FunctionId("sin", "/lib/x86_64-linux-gnu/libm.so.6")
    # call lines carry inclusive cost, never self cost; missing trailing events are zero
    assert costs.functions[kernel].self_cost == (19.0, 3.0, 1.0)
    assert costs.functions[cold].self_cost == (2.0, 0.0, 0.0)
    assert costs.functions[sin].self_cost == (150.0, 50.0, 10.0)
    # cob= names the callee's object; without it, the caller's object is meant
    assert costs.calls[(kernel, sin)].inclusive == (100.0, 30.0, 10.0)
    assert costs.calls[(cold, sin)].inclusive == (60.0, 20.0, 0.0)
    assert costs.inclusive_of(kernel) == 119
    assert costs.total("Dr") == 53
    assert part.instructions is not None
    rows = {(hex(r.address), r.line, r.file): r.cost[0] for r in part.instructions.rows}
    assert rows == {
        ("0x401000", 10, "/src/kernel.c"): 3.0,
        ("0x401003", 10, "/src/kernel.c"): 2.0,  # "*" keeps the line
        ("0x401007", 11, "/src/kernel.c"): 1.0,
        ("0x401009", 3, "/src/helper.h"): 5.0,  # fi= inlined file, -8 lines
        ("0x40100e", 5, "/src/kernel.c"): 7.0,  # jump lines did not move the base
        # relative to 0x40100e: the calls= line and its cost line did not move it either
        ("0x40100d", 5, "/src/kernel.c"): 1.0,
        ("0x402000", 20, "/src/kernel.c"): 2.0,
        ("0x9000", 40, "/glibc/s_sin.c"): 150.0,
    }
    assert part.instructions.addresses_by_object()["/lib/x86_64-linux-gnu/libm.so.6"] == (0x9000,)


def test_several_parts_keep_name_ids_and_their_own_totals() -> None:
    profile = parse_callgrind(load("parts.out"))
    assert [p.number for p in profile.parts] == [1, 2]
    assert [p.trigger for p in profile.parts] == ["dump perflab-empty-0", "dump perflab-stmt-0"]
    assert [p.totals for p in profile.parts] == [(30,), (130,)]
    assert [p.summary for p in profile.parts] == [(30,), (130,)]
    eval_frame = FunctionId("_PyEval_EvalFrameDefault", "/usr/lib/libpython3.11.so.1.0")
    assert profile.parts[1].costs.self_of(eval_frame) == 90
    assert profile.combined().self_of(eval_frame) == 115
    stmt_minus_empty = profile.parts[1].costs - profile.parts[0].costs
    assert stmt_minus_empty.total() == 100
    normalised = stmt_minus_empty.normalised()
    names = {fid.name: c.self_cost[0] for fid, c in normalised.functions.items()}
    assert names == {"_PyEval_EvalFrameDefault": 65.0, "[unknown]": -5.0, "list_append": 40.0}
    assert {fid.object for fid in normalised.functions} == {"libpython3.11.so.1.0"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("events: Ir\nfn=(3)\n", "used before defined"),
        ("events: Ir\n1 2\n", "before any fn="),
        ("events: Ir\nfn=f\nx 2\n", "unrecognised line"),
        ("events: Ir\nfn=f\n1 2z\n", "bad cost"),
        ("version: 7\n", "unsupported format version"),
    ],
)
def test_malformed_input_is_reported_with_its_line(text: str, message: str) -> None:
    with pytest.raises(CallgrindFormatError, match=message):
        parse_callgrind(text)
