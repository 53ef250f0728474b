"""Which events the counters lens could count, and how to make the others countable: the machine
facts the hints depend on, each reason's hint, and every event's availability read back from the
stored probe and counts. Pure: the facts are read by host.py, the probe run by probe.py."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.counters.findings import UnavailableEvent
from perflab.lenses.counters.metric import COUNTERS
from perflab.measure.lens import BenchmarkData
from perflab.records.model import Note, Severity
from perflab.tool_output.perf_stat import Availability

PROBE = "counter-probe"  # artifact (baseline variant): events found unavailable before measuring
AVAILABILITY = "counter-availability"  # artifact per variant and generation


@dataclass(frozen=True)
class HostFacts:
    """What the hints depend on; injectable for tests."""

    hypervisor: bool
    paranoid: int | None
    root: bool


def hint_for(reason: Availability, facts: HostFacts) -> str:
    """How to make an event countable that was not, for the reason perf gave, on this machine."""
    if reason is Availability.NOT_SUPPORTED:
        if facts.hypervisor:
            return (
                "this is a VM without a virtual PMU, so hardware events cannot be counted; run on "
                "bare metal or enable PMU passthrough (KVM: <cpu mode='host-passthrough'> with "
                "<pmu state='on'/>; cloud: a bare-metal or PMU-enabled instance type)"
            )
        return "this CPU's PMU driver does not provide the event; `perflab events` lists what does"
    if reason is Availability.UNKNOWN_EVENT:
        return (
            "perf does not know this name: search with `perflab events WORD`; vendor events "
            "need a perf built with this CPU's event tables"
        )
    if reason is Availability.PERMISSION:
        level = "" if facts.paranoid is None else f" (kernel.perf_event_paranoid={facts.paranoid})"
        return (
            f"not permitted{level}: `sudo sysctl kernel.perf_event_paranoid=1`, or give perf "
            "CAP_PERFMON: `sudo setcap cap_perfmon,cap_sys_ptrace+ep $(command -v perf)`"
        )
    return (
        "the counter was never scheduled: too many events for the PMU at once, or the NMI "
        "watchdog holds one (`sudo sysctl kernel.nmi_watchdog=0`); request fewer events"
    )


def unavailable_event(
    event: str, reason: Availability, facts: HostFacts, message: str = ""
) -> UnavailableEvent:
    return UnavailableEvent(event, reason, message, hint_for(reason, facts))


def user_only_note(benchmark: str | None, event: str | None = None) -> Note:
    what = f"event {event!r}" if event else "events"
    return Note(
        Severity.WARNING,
        f"perf counted {what} in user space only (kernel excluded) for lack of permission",
        hint="`sudo sysctl kernel.perf_event_paranoid=1` or run perf with CAP_PERFMON",
        benchmark=benchmark,
        metric=COUNTERS,
    )


def unavailable_note(benchmark: str, item: UnavailableEvent) -> Note:
    return Note(
        Severity.WARNING,
        f"event {item.event!r} was not measured: {item.reason}",
        hint=item.hint,
        benchmark=benchmark,
        metric=COUNTERS,
    )


def stored_probe(data: BenchmarkData, baseline: str) -> tuple[list[UnavailableEvent], HostFacts]:
    probes = data.artifacts_of(baseline, PROBE)
    if not probes:
        return [], HostFacts(hypervisor=False, paranoid=None, root=False)
    stored = json.loads(probes[-1].content)
    facts = HostFacts(**stored["facts"])
    return [UnavailableEvent.from_json(item) for item in stored["unavailable"]], facts


def stored_availability(data: BenchmarkData, variants: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per event, over all variants and generations: the worst state, the smallest running
    fraction, and whether perf fell back to user-only counting."""
    merged: dict[str, dict[str, Any]] = {}
    rank = {Availability.COUNTED: 0, Availability.MULTIPLEXED: 1}
    for variant in variants:
        for artifact in data.artifacts_of(variant, AVAILABILITY):
            for event, state in json.loads(artifact.content).items():
                entry = merged.setdefault(
                    event, {"availability": str(Availability.COUNTED), "seen": []}
                )
                entry["seen"].append(state["availability"])
                current = Availability(state["availability"])
                if rank.get(current, 2) > rank.get(Availability(entry["availability"]), 2):
                    entry["availability"] = str(current)
                fraction = state.get("running_fraction")
                if fraction is not None and current.usable:
                    previous = entry.get("min_running_fraction")
                    entry["min_running_fraction"] = (
                        fraction if previous is None else min(previous, fraction)
                    )
                entry["user_only"] = entry.get("user_only", False) or bool(state.get("user_only"))
    return merged


def never_counted(event: str, state: Mapping[str, Any], facts: HostFacts) -> UnavailableEvent:
    seen = [Availability(s) for s in state.get("seen", [])]
    reason = (
        Availability.NOT_SUPPORTED
        if Availability.NOT_SUPPORTED in seen
        else Availability.NOT_COUNTED
    )
    return UnavailableEvent(event, reason, "no count in any measurement", hint_for(reason, facts))
