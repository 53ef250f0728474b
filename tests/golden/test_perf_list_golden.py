"""`perf list --long-desc` output (captured on this VM, and in perf's format for a bare-metal Intel
server with vendor events) parsed into searchable events."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from perflab.diagnose.events import (
    NO_PMU,
    Countable,
    find_events,
    matches,
    parse_perf_list,
    search_events,
    unlisted_generic_events,
    with_trial,
)
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.report.machine_views import render_event_search

DATA = Path(__file__).parent / "data" / "perf"


def test_vm_list_has_software_events_with_aliases() -> None:
    events = {e.name: e for e in parse_perf_list((DATA / "list_vm.txt").read_text())}
    assert events["context-switches"].aliases == ("cs",)
    assert events["task-clock"].kind == "Software event"
    assert "msr/tsc/" in events


def test_vendor_events_with_wrapped_descriptions() -> None:
    events = {e.name: e for e in parse_perf_list((DATA / "list_intel_vendor.txt").read_text())}
    licence = events["core_power.lvl2_turbo_license"]
    assert licence.kind == "core_power"
    assert licence.description.endswith("AVX512 turbo schedule")
    assert "\n" not in licence.description
    assert events["cpu-cycles"].aliases == ("cycles",)
    assert "rNNN" not in events and not any(name.startswith("mem:") for name in events)
    assert "tma_backend_bound" not in events  # metrics are not events
    found = [e.name for e in events.values() if matches(e, "512")]
    assert found == ["core_power.lvl2_turbo_license", "fp_arith_inst_retired.512b_packed_double"]
    assert [e.name for e in events.values() if matches(e, "turbo avx2")] == [
        "core_power.lvl1_turbo_license"
    ]


def _not_supported(spec: LaunchSpec, stdin: str | None) -> Completed:
    events = spec.argv[spec.argv.index("-e") + 1].split(",")
    lines = [f"<not supported>,,{name},0,100.00,," for name in events]
    return Completed(spec.argv, 0, "", "\n".join(lines) + "\n", 1)


def PerfOnAVm() -> FakeRunner:  # noqa: N802
    """`perf list` as on a VM without a PMU; counting any event prints `<not supported>`."""
    return (
        FakeRunner()
        .on_run(r"^\S+ list", stdout=(DATA / "list_vm.txt").read_text())
        .on_run(r"^\S+ stat ", _not_supported)
    )


def test_generic_hardware_events_missing_from_the_list_are_shown_not_countable() -> None:
    runner = PerfOnAVm()
    found = search_events("cycles", runner=runner, perf="perf")
    assert [e.name for e in found] == [
        "cpu-cycles",
        "ref-cycles",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
    ]
    assert found[0].aliases == ("cycles",) and found[0].kind == "Hardware event"
    assert {(e.countable, e.reason) for e in found} == {(Countable.NO, NO_PMU)}
    assert [c for c, _ in runner.calls if c.argv[1] == "stat"]  # tried, to be sure

    untried = search_events("branches", runner=PerfOnAVm(), perf="perf", try_counting=False)
    assert [(e.name, e.countable, e.reason) for e in untried] == [
        ("branch-instructions", Countable.NO, NO_PMU)
    ]


def test_generic_events_are_not_added_where_perf_lists_them() -> None:
    listed = parse_perf_list((DATA / "list_intel_vendor.txt").read_text())
    assert unlisted_generic_events(listed, "cycles") == []
    vm = parse_perf_list((DATA / "list_vm.txt").read_text())
    assert unlisted_generic_events(vm, "task-clock") == []  # software events are listed


def test_a_counted_generic_event_is_countable_whatever_the_list_said() -> None:
    [cycles] = unlisted_generic_events([], "cpu-cycles")
    assert with_trial(cycles, (Countable.YES, None)) == replace(
        cycles, countable=Countable.YES, reason=None
    )


def test_a_search_finding_nothing_on_a_vm_says_it_is_the_missing_pmu() -> None:
    search = find_events("512", runner=PerfOnAVm(), perf="perf", try_counting=False)
    assert search.events == () and not search.pmu_listed
    assert search.nothing_found_because is not None
    assert "no hardware PMU" in search.nothing_found_because
    console = Console(width=200, record=True)
    render_event_search(search, console)
    text = console.export_text()
    assert "no perf event matches '512': this machine has no hardware PMU" in text
    assert "perflab doctor" in text
    # where events do match, the table is shown as before
    found = find_events("context", runner=PerfOnAVm(), perf="perf", try_counting=False)
    assert found.events and found.nothing_found_because is None
