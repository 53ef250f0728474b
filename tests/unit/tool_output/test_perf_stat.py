"""`perf stat`'s output as typed counts (tool_output/perf_stat.py), on lines written here in
its CSV and JSON formats and its captured error messages: what was counted, multiplexed or not,
raw event names holding the separator, the names asked for mapped back, derived metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.tool_output.perf_stat import (
    Availability,
    counts_for_requested,
    derived_metrics,
    find_unknown_event,
    is_permission_failure,
    parse_stat_csv,
    parse_stat_json,
    permission_denied_event,
    split_event_list,
)

PERF = Path(__file__).parents[2] / "golden" / "data" / "perf"

CSV = """\
# started on Sun Nov 29
0.92,msec,task-clock,916489,100.00,0.9,CPUs utilized
3000000,,cycles,500000,50.00,,
<not supported>,,instructions,0,100.00,,
0,,branch-misses,0,0.00,,
12,,cpu/event=0x3c,umask=0/,916489,100.00,,
"""


def test_each_line_is_a_count_and_why_there_is_none() -> None:
    counts = parse_stat_csv(CSV).by_event()
    clock = counts["task-clock"]
    assert (clock.value, clock.unit, clock.availability) == (920_000.0, "ns", Availability.COUNTED)
    cycles = counts["cycles"]
    assert cycles.availability is Availability.MULTIPLEXED and cycles.running_fraction == 0.5
    assert counts["instructions"].availability is Availability.NOT_SUPPORTED
    assert counts["branch-misses"].availability is Availability.NOT_COUNTED  # 0% running
    assert counts["cpu/event=0x3c,umask=0/"].value == 12.0  # the separator inside a raw name
    assert not Availability.NOT_COUNTED.usable and Availability.MULTIPLEXED.usable


def test_interval_lines_start_with_their_time() -> None:
    text = "1.000,5,,cycles,100,100.00,,\n2.000,7,,cycles,100,100.00,,\n"
    assert [c.value for c in parse_stat_csv(text, interval=True).counts] == [5.0, 7.0]


def test_json_lines_read_as_the_csv_does() -> None:
    text = (
        '{"counter-value" : "42", "unit" : "", "event" : "cycles", "event-runtime" : 100, '
        '"pcnt-running" : 100.00}\nnot json\n{"no": "event"}\n'
    )
    (count,) = parse_stat_json(text).counts
    assert (count.event, count.value, count.availability) == ("cycles", 42.0, Availability.COUNTED)


def test_the_names_asked_for_are_found_in_user_only_and_per_core_type_lines() -> None:
    hybrid = parse_stat_csv(
        "10,,cpu_core/cycles/,100,100.00,,\n5,,cpu_atom/cycles/,100,80.00,,\n"
        "7,,instructions:u,100,100.00,,\n"
    )
    found = counts_for_requested(hybrid, ["cycles", "instructions", "branches"])
    assert found["cycles"].value == 15.0 and found["cycles"].running_fraction == 0.8
    assert found["instructions"].user_only and "branches" not in found


def test_an_event_list_splits_at_top_level_commas() -> None:
    assert split_event_list("cycles,{instructions,branches},cpu/event=0x3c,umask=0/") == [
        (0, "cycles"),
        (8, "instructions"),
        (21, "branches"),
        (31, "cpu/event=0x3c,umask=0/"),
    ]


def test_perfs_refusals_name_the_event_or_the_permission() -> None:
    unknown = find_unknown_event(
        (PERF / "stat_unknown_event.stderr").read_text(), ["task-clock", "bogus.event", "cycles"]
    )
    assert unknown is not None and unknown.event == "bogus.event"
    assert find_unknown_event("all good\n", ["cycles"]) is None
    permission = (PERF / "stat_permission.stderr").read_text()
    assert is_permission_failure(permission) and permission_denied_event(permission) == "cycles"
    assert not is_permission_failure("event syntax error")


def test_derived_metrics_from_what_was_counted() -> None:
    metrics = {m.name: m.value for m in derived_metrics(
        {"cycles": 2e9, "instructions": 3e9, "task-clock": 1e9, "branch-misses": 5, "branches": 100}
    )}  # fmt: skip
    assert metrics["IPC"] == pytest.approx(1.5)
    assert metrics["effective GHz"] == pytest.approx(2.0)
    assert metrics["branch miss rate"] == pytest.approx(0.05)
    assert "IPC" not in {m.name for m in derived_metrics({"instructions": 3e9})}
