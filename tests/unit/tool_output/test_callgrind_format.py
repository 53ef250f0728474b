"""Callgrind's file format read (tool_output/callgrind_format.py) on small files written here:
compressed names in their id spaces, relative positions, a call's inclusive cost kept apart
from its caller's self cost, several parts, and errors that name their line. Real callgrind
output is read in tests/golden/test_callgrind_golden.py."""

from __future__ import annotations

import pytest

from perflab.tool_output.callgrind import FunctionId
from perflab.tool_output.callgrind_format import CallgrindFormatError, parse_callgrind

HEADER = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd: /usr/bin/prog --fast
part: 1
desc: Trigger: Program termination
positions: line
events: Ir Dr
"""

MAIN = FunctionId("main", "/usr/bin/prog")
WORK = FunctionId("work", "/usr/bin/prog")
MALLOC = FunctionId("malloc", "/usr/lib/libc.so.6")


def test_self_costs_calls_and_compressed_names() -> None:
    profile = parse_callgrind(
        HEADER
        + """\
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
10 100 20
+1 50
cfn=(2) work
calls=3 30
11 900 300
cob=(2) /usr/lib/libc.so.6
cfi=(2) malloc.c
cfn=(3) malloc
calls=1 0
12 40 8
fn=(2)
30 900 300
ob=(2)
fl=(2)
fn=(3)
0 40 8
totals: 1090 328
"""
    )
    assert (profile.command, profile.pid, profile.creator) == (
        "/usr/bin/prog --fast",
        4242,
        "callgrind-3.19.0",
    )
    (part,) = profile.parts
    assert part.number == 1 and part.trigger == "Program termination"
    assert part.events == ("Ir", "Dr") and part.totals == (1090, 328)
    costs = part.costs
    # a missing trailing cost is zero; the calls' inclusive costs are not main's self cost
    assert costs.functions[MAIN].self_cost == (150.0, 20.0)
    assert costs.functions[MAIN].file == "prog.c"
    assert costs.functions[WORK].self_cost == (900.0, 300.0)
    assert costs.functions[MALLOC].file == "malloc.c"  # cfi=(2) named by fl=(2) ... later
    call = costs.calls[(MAIN, WORK)]
    assert (call.count, call.inclusive) == (3.0, (900.0, 300.0))
    assert costs.calls[(MAIN, MALLOC)].count == 1.0
    assert part.total("Ir") == 1090.0 and part.instructions is None


def test_instruction_positions_give_per_address_costs() -> None:
    profile = parse_callgrind(
        HEADER.replace("positions: line", "positions: instr line")
        + """\
ob=(1) /usr/bin/prog
fl=(1) prog.c
fn=(1) main
0x1000 10 5 1
+4 +1 7 2
"""
    )
    (part,) = profile.parts
    assert part.instructions is not None
    addresses = [(c.address, c.line, c.cost) for c in part.instructions.rows]
    assert addresses == [(0x1000, 10, (5.0, 1.0)), (0x1004, 11, (7.0, 2.0))]
    assert part.costs.functions[MAIN].self_cost == (12.0, 3.0)


def test_each_part_is_its_own_and_they_combine() -> None:
    body = "ob=(1) /usr/bin/prog\nfl=(1) prog.c\nfn=(1) main\n10 {ir} 1\n"
    profile = parse_callgrind(
        HEADER + body.format(ir=100) + "totals: 100 1\npart: 2\nevents: Ir Dr\n"
        "ob=(1)\nfl=(1)\nfn=(1)\n10 50 1\n"
    )
    assert [p.number for p in profile.parts] == [1, 2]
    assert [p.total("Ir") for p in profile.parts] == [100.0, 50.0]
    assert profile.combined().functions[MAIN].self_cost == (150.0, 2.0)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("fn=(1) main\n10 abc\n", "line 11"),
        ("fn=(7)\n10 1\n", "line 10"),
    ],
    ids=["not-a-number", "an-id-never-named"],
)
def test_a_file_that_cannot_be_read_names_its_line(body: str, said: str) -> None:
    with pytest.raises(CallgrindFormatError, match=said) as raised:
        parse_callgrind(HEADER + body)
    assert raised.value.line_number == int(said.split()[1])
