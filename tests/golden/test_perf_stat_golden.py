"""`perf stat` outputs (written in the formats perf-stat(1) documents) parsed into typed counts."""

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

DATA = Path(__file__).parent / "data" / "perf"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_intel_turbo_licence_csv() -> None:
    counts = parse_stat_csv(read("stat_intel_icx_licence.csv")).by_event()
    assert counts["cycles"].value == 4012345678
    assert counts["cycles"].availability is Availability.COUNTED
    assert counts["task-clock"].unit == "ns"
    assert counts["task-clock"].value == pytest.approx(1234.56e6)
    assert counts["core_power.lvl2_turbo_license"].value == 280861953
    derived = {
        d.name: d.value for d in derived_metrics({k: v.value or 0 for k, v in counts.items()})
    }
    assert derived["IPC"] == pytest.approx(9876543210 / 4012345678)
    assert derived["effective GHz"] == pytest.approx(4012345678 / 1234.56e6)
    assert derived["licence-2 cycle fraction"] == pytest.approx(0.07, abs=0.001)
    assert derived["licence-1 cycle fraction"] == pytest.approx(0.30, abs=0.001)
    assert derived["branch miss rate"] == pytest.approx(12345678 / 1876543210)
    assert derived["cache miss rate"] == pytest.approx(1234567 / 45678901)


def test_amd_csv_skips_metric_only_lines() -> None:
    counts = parse_stat_csv(read("stat_amd_zen3.csv")).by_event()
    assert set(counts) == {
        "task-clock",
        "context-switches",
        "cpu-migrations",
        "page-faults",
        "cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "instructions",
        "branches",
        "branch-misses",
        "ls_dc_accesses",
    }
    derived = {d.name for d in derived_metrics({k: v.value or 0 for k, v in counts.items()})}
    assert "IPC" in derived and not any("licence" in name for name in derived)


def test_multiplexed_counts_keep_running_fraction() -> None:
    counts = parse_stat_csv(read("stat_intel_multiplexed.csv")).by_event()
    cycles = counts["cycles"]
    assert cycles.availability is Availability.MULTIPLEXED
    assert cycles.running_fraction == pytest.approx(0.7995)
    assert cycles.value == 8026673346  # perf's scaled value
    assert counts["task-clock"].availability is Availability.COUNTED
    assert counts["LLC-load-misses"].availability is Availability.NOT_COUNTED
    assert counts["LLC-load-misses"].value is None


def test_vm_without_pmu() -> None:
    counts = parse_stat_csv(read("stat_vm_no_pmu.csv")).by_event()
    assert counts["cycles"].availability is Availability.NOT_SUPPORTED
    assert not counts["cycles"].availability.usable
    assert counts["page-faults"].value == 49
    assert counts["context-switches"].value == 0
    assert counts["context-switches"].availability is Availability.COUNTED


def test_user_only_fallback_maps_back_to_requested_names() -> None:
    output = parse_stat_csv(read("stat_nonroot_paranoid2.csv"))
    mapped = counts_for_requested(output, ["task-clock", "cycles", "context-switches"])
    assert mapped["task-clock"].user_only
    assert mapped["cycles"].availability is Availability.NOT_SUPPORTED


def test_hybrid_events_are_summed() -> None:
    output = parse_stat_csv(read("stat_hybrid_adl.csv"))
    mapped = counts_for_requested(output, ["cycles", "instructions", "task-clock"])
    assert mapped["cycles"].value == 402113001 + 50223004
    assert mapped["cycles"].availability is Availability.MULTIPLEXED


def test_raw_event_names_containing_the_separator() -> None:
    counts = parse_stat_csv(read("stat_raw_event_commas.csv")).by_event()
    assert counts["cpu/event=0x3c,umask=0x00/"].value == 4012345678
    assert counts["r00c0"].value == 9876543210


def test_interval_mode() -> None:
    output = parse_stat_csv(read("stat_interval.csv"), interval=True)
    cycles = [c.value for c in output.counts if c.event == "cycles"]
    assert cycles == [1000000000, 999000000]


def test_json_format() -> None:
    counts = parse_stat_json(read("stat_intel_icx_licence.json")).by_event()
    assert counts["task-clock"].value == pytest.approx(1234.561234e6)
    assert counts["instructions"].availability is Availability.MULTIPLEXED
    assert counts["instructions"].running_fraction == pytest.approx(0.5)
    assert counts["uops_dispatched.port_0"].availability is Availability.NOT_SUPPORTED
    assert counts["LLC-load-misses"].availability is Availability.NOT_COUNTED


@pytest.mark.parametrize(
    ("fixture", "events", "expected", "message"),
    [
        (
            "stat_unknown_event.stderr",
            ["task-clock", "bogus.event", "cycles"],
            "bogus.event",
            "parser",
        ),
        (
            "stat_unknown_pmu.stderr",
            ["task-clock", "cpu/event=0x3c,umask=0/", "cycles"],
            "cpu/event=0x3c,umask=0/",
            "Cannot find PMU",
        ),
        (
            "stat_unknown_truncated.stderr",
            [
                "task-clock",
                "context-switches",
                "cpu-migrations",
                "page-faults",
                "cycles",
                "instructions",
                "branches",
                "branch-misses",
                "offcore-misses",
                "cache-references",
                "cache-misses",
                "not_an_event",
            ],
            "not_an_event",
            "parser",
        ),
    ],
)
def test_unknown_event_is_named(
    fixture: str, events: list[str], expected: str, message: str
) -> None:
    unknown = find_unknown_event(read(fixture), events)
    assert unknown is not None
    assert unknown.event == expected
    assert message in unknown.message


def test_permission_failure() -> None:
    stderr = read("stat_permission.stderr")
    assert is_permission_failure(stderr)
    assert permission_denied_event(stderr) == "cycles"
    assert find_unknown_event(stderr, ["cycles"]) is None


def test_split_event_list_keeps_pmu_terms_and_groups() -> None:
    assert [e for _, e in split_event_list("a,cpu/x=1,y=2/u,{b,c},d")] == [
        "a",
        "cpu/x=1,y=2/u",
        "b",
        "c",
        "d",
    ]
