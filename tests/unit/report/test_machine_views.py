"""The terminal views of what the machine offers (report/machine_views.py): `perflab events`
(nothing found blamed on a missing PMU, with the fix), `perflab doctor`'s tables, and a store's
health, damaged or intact."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from perflab.records.checks import (
    NO_PMU_FIX,
    Check,
    Countable,
    DoctorReport,
    EventInfo,
    EventSearch,
    LensStatus,
    Status,
)
from perflab.records.kinds import Metric
from perflab.report.machine_views import (
    render_doctor,
    render_event_search,
    render_store_health,
)
from perflab.store.health import StoreHealth


def shown(draw: Callable[..., None], *args: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    draw(*args, console)
    return console.export_text()


def test_events_are_listed_with_whether_they_count_here_and_why_not() -> None:
    events = (
        EventInfo("cycles", kind="Hardware event", countable=Countable.YES),
        EventInfo(
            "uops_issued.any", kind="pipeline", countable=Countable.NO, reason="not supported"
        ),
    )
    text = shown(render_event_search, EventSearch("u", events, pmu_listed=True))
    assert "perf events matching 'u'" in text
    assert "no (not supported)" in text and "yes" in text


def test_no_event_found_on_a_machine_without_a_pmu_says_why_and_the_fix() -> None:
    text = shown(render_event_search, EventSearch("uops", (), pmu_listed=False))
    assert "no perf event matches 'uops': this machine has no hardware PMU" in text
    assert f"hint: {NO_PMU_FIX}" in text
    plain = shown(render_event_search, EventSearch("uops", (), pmu_listed=True))
    assert plain.strip() == "no perf event matches 'uops'"


def test_doctor_shows_the_lenses_tools_and_noise_sources() -> None:
    report = DoctorReport(
        lenses=(LensStatus(Metric.INSTRUCTIONS, False, "no valgrind", fix="install valgrind"),),
        tools=(Check("perf", Status.OK, "perf 6.1"),),
        noise=(Check("turbo", Status.WARNING, "turbo boost is on", fix="turn it off"),),
    )
    text = shown(render_doctor, report)
    for title in ("lenses", "tools", "noise sources"):
        assert title in text
    assert "install valgrind" in text and "turbo boost is on" in text and "warning" in text


def test_a_damaged_store_names_its_readable_runs_and_how_to_salvage() -> None:
    health = StoreHealth(
        Path("/runs/perflab.db"),
        4096,
        "integrity_check",
        ("page 3 is damaged",),
        run_ids=(1, 2, 3, 5),
        unreadable_runs=(3,),
        statuses={"complete": 3},
        schema_version=3,
    )
    text = shown(render_store_health, health)
    assert "damaged" in text and "page 3 is damaged" in text
    assert "readable runs" in text and "1-2, 5" in text
    assert "sqlite3 FILE .recover" in text
    intact = shown(render_store_health, StoreHealth(Path("/runs/p.db"), 0, "quick_check", ()))
    assert "intact" in intact and ".recover" not in intact and "new runs" in intact
