"""The counters lens's probe: the requested events tried on `true` before measuring, each one
perf cannot count set aside with the reason and fix its findings explain."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.counters.availability import HostFacts, unavailable_event
from perflab.lenses.counters.findings import UnavailableEvent
from perflab.lenses.counters.host import host_facts
from perflab.machine.proc import ProcessRunner
from perflab.records.errors import ToolUnavailableError
from perflab.tool_drivers.perf import Refusal, find_perf, probe_stat
from perflab.tool_output.perf_stat import Availability

# an event perf refused is reported with the availability the findings explain (and fix)
_REFUSAL_AVAILABILITY = {
    Refusal.PERMISSION: Availability.PERMISSION,
    Refusal.UNKNOWN_EVENT: Availability.UNKNOWN_EVENT,
}


def probe_events(
    runner: ProcessRunner,
    events: Sequence[str],
    *,
    perf: str | None = None,
    facts: HostFacts | None = None,
) -> tuple[list[str], list[UnavailableEvent], bool]:
    """Try the events on `true`: (countable events, unavailable events, user_only).

    One bad name never hides the others (the driver's probe sets each refused name aside); a
    failure of perf that names no event stops the lens."""
    facts = facts or host_facts()
    probe = probe_stat(runner, events, perf=perf or find_perf(runner))
    unavailable: list[UnavailableEvent] = []
    for refused in probe.refused:
        if refused.refusal is Refusal.FAILED:
            raise ToolUnavailableError(
                f"perf stat failed ({refused.message})",
                detail=refused.detail,
                hint="try `perf stat -e task-clock -- true` by hand",
            )
        availability = _REFUSAL_AVAILABILITY[refused.refusal]
        unavailable.append(unavailable_event(refused.event, availability, facts, refused.message))
    usable = []
    for name in probe.accepted:
        count = probe.counts.get(name)
        if count is not None and count.availability is Availability.NOT_SUPPORTED:
            unavailable.append(unavailable_event(name, count.availability, facts))
        else:
            usable.append(name)
    user_only = any(count.user_only for count in probe.counts.values())
    return usable, unavailable, user_only
