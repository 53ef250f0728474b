"""The records of `perflab doctor` and `perflab events` (records/checks.py): their JSON, which
leaves out a fix or reason that is not there, and why a search found nothing."""

from __future__ import annotations

from perflab.records.checks import (
    NO_PMU_NO_MATCH,
    Check,
    Countable,
    DoctorReport,
    EventInfo,
    EventSearch,
    LensStatus,
    Status,
)
from perflab.records.kinds import Metric


def test_a_doctor_reports_json_lists_lenses_tools_and_noise() -> None:
    report = DoctorReport(
        lenses=(LensStatus(Metric.INSTRUCTIONS, False, "no valgrind", fix="apt install valgrind"),),
        tools=(Check("perf", Status.OK, "perf 6.1"),),
        noise=(Check("turbo", Status.WARNING, "turbo on", fix="disable it"),),
    )
    assert report.to_json() == {
        "lenses": [
            {
                "lens": "instructions",
                "available": False,
                "detail": "no valgrind",
                "fix": "apt install valgrind",
            }
        ],
        "tools": [{"name": "perf", "status": "ok", "detail": "perf 6.1"}],
        "noise": [
            {"name": "turbo", "status": "warning", "detail": "turbo on", "fix": "disable it"}
        ],
    }
    assert "fix" not in LensStatus(Metric.TIME, True, "always").to_json()


def test_an_events_json_says_whether_it_counts_and_why_not() -> None:
    counts = EventInfo(
        "cycles", aliases=("cpu-cycles",), kind="Hardware event", countable=Countable.YES
    )
    assert counts.to_json() == {
        "name": "cycles",
        "aliases": ["cpu-cycles"],
        "kind": "Hardware event",
        "description": "",
        "countable": "yes",
    }
    refused = EventInfo("uops", countable=Countable.NO, reason="not supported").to_json()
    assert (refused["countable"], refused["reason"]) == ("no", "not supported")
    assert EventInfo("r01c2").to_json()["countable"] == "untried"


def test_nothing_found_is_blamed_on_the_machine_only_without_a_pmu() -> None:
    assert EventSearch("uop", (), pmu_listed=False).nothing_found_because == NO_PMU_NO_MATCH
    assert EventSearch("uop", (), pmu_listed=True).nothing_found_because is None
    found = EventSearch("cycles", (EventInfo("cycles"),), pmu_listed=False)
    assert found.nothing_found_because is None
