"""`perf list --long-desc` output (captured on this VM, and in perf's format for a bare-metal Intel
server with vendor events) parsed into searchable events."""

from __future__ import annotations

from pathlib import Path

from perflab.events import matches, parse_perf_list

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
