"""Reading what callgrind wrote (measure/callgrind/dumps.py): a process's dumps in the order
written, each dump's trigger, its totals from the totals line or from its costs, and the cache
events stored beside the instructions."""

from __future__ import annotations

from pathlib import Path

from perflab.measure.callgrind.dumps import (
    derived,
    dump_hint,
    dump_totals,
    read_dumps,
    totals_of,
    trigger_of,
)

DUMP = """\
version: 1
creator: callgrind-3.19.0
part: 1
desc: Trigger: Client Request: perflab-stmt-2
events: Ir Dr Dw D1mr D1mw ILmr DLmr DLmw
fn=(1) main
10 100 20 10 4 2 1 1 0
totals: 100 20 10 4 2 1 1
"""


def test_a_dumps_totals_come_from_its_totals_line_trailing_zeros_left_out() -> None:
    assert dump_totals(DUMP) == {
        "Ir": 100.0, "Dr": 20.0, "Dw": 10.0, "D1mr": 4.0, "D1mw": 2.0,
        "ILmr": 1.0, "DLmr": 1.0, "DLmw": 0.0,
    }  # fmt: skip
    assert dump_totals(DUMP.replace("totals: 100 20 10 4 2 1 1\n", "")) is None
    assert dump_totals(DUMP + "part: 2\nevents: Ir\ntotals: 5\n") is None


def test_the_stored_values_are_the_instructions_and_the_cache_events_counted() -> None:
    assert totals_of(DUMP) == {"instructions": 100.0, "D1_misses": 6.0, "LL_misses": 2.0}
    # without a totals line the costs are summed: the same values
    assert totals_of(DUMP.replace("totals: 100 20 10 4 2 1 1\n", "")) == totals_of(DUMP)
    assert derived({"Ir": 7.0, "Bcm": 1.0}) == {"instructions": 7.0}  # Bim not counted


def test_a_dumps_trigger_names_what_asked_for_it() -> None:
    assert dump_hint("callgrind.stmt", 2) == "perflab-stmt-2"
    assert trigger_of(DUMP) == "Client Request: perflab-stmt-2"
    assert trigger_of("version: 1\n") is None


def test_a_processs_dumps_are_read_in_the_order_written(tmp_path: Path) -> None:
    for name in ("callgrind.out.7", "callgrind.out.7.2", "callgrind.out.7.10", "callgrind.out.8.1",
                 "other.txt"):  # fmt: skip
        (tmp_path / name).write_text(name)
    assert [n for n, _ in read_dumps(str(tmp_path), pid=7)] == [
        "callgrind.out.7.2",
        "callgrind.out.7.10",
        "callgrind.out.7",  # written at exit, last
    ]
    assert [n for n, _ in read_dumps(str(tmp_path))][-1] == "callgrind.out.8.1"
