"""Search perf's event list (names and descriptions, vendor JSON events included) and say whether
this machine can count each match.

`perf list --long-desc` (perf 6.1 has no JSON form of the list) prints two shapes of entry:

    branch-instructions OR branches                    [Hardware event]
    cache:
      l1d.replacement
           [Counts the number of cache lines replaced in L1 data cache. Unit: cpu]

The first is one line with the kind in brackets; the second (vendor events, grouped under a
`topic:` heading) puts a bracketed, possibly wrapped description on the following lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from perflab.machine.proc import LaunchSpec, ProcessRunner, SubprocessRunner
from perflab.records.checks import Countable as Countable
from perflab.records.checks import EventInfo as EventInfo
from perflab.records.checks import EventSearch as EventSearch
from perflab.records.errors import ToolUnavailableError
from perflab.tool_drivers.perf import Refusal, RefusedEvent, find_perf, probe_stat
from perflab.tool_output.perf_stat import Availability

_MAX_TRIED = 200  # trying events costs one `perf stat` per batch; huge result lists are not tried
HARDWARE_KIND = "Hardware event"
NO_PMU = "no hardware PMU here (perf list shows no hardware events)"
# perf's generic hardware events (name, aliases), as `perf list` spells them where a PMU exists
GENERIC_HARDWARE_EVENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cpu-cycles", ("cycles",)),
    ("instructions", ()),
    ("branch-instructions", ("branches",)),
    ("branch-misses", ()),
    ("cache-references", ()),
    ("cache-misses", ()),
    ("ref-cycles", ()),
    ("bus-cycles", ()),
    ("stalled-cycles-frontend", ("idle-cycles-frontend",)),
    ("stalled-cycles-backend", ("idle-cycles-backend",)),
)


_ONE_LINE = re.compile(r"^\s{2}(?P<names>\S.*?)\s+\[(?P<kind>[^\]]+)\]\s*$")
_TOPIC = re.compile(r"^(?P<topic>[A-Za-z0-9_ .-]+):\s*$")
_NAME_ONLY = re.compile(r"^\s{2}(?P<name>\S+)\s*$")
_DESCRIPTORS = ("Raw hardware event descriptor", "Hardware breakpoint")


def parse_perf_list(text: str) -> list[EventInfo]:
    """Events from `perf list [--long-desc]` text. Metric groups and descriptors are skipped."""
    events: list[EventInfo] = []
    topic = ""
    pending: EventInfo | None = None
    description: list[str] = []
    in_metrics = False

    def flush() -> None:
        nonlocal pending, description
        if pending is not None:
            text = " ".join(description).strip()
            events.append(replace(pending, description=text.removeprefix("[").removesuffix("]")))
        pending, description = None, []

    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("Metric Groups") or line.startswith("List of pre-defined events"):
            flush()
            in_metrics = line.startswith("Metric Groups")
            continue
        if in_metrics:
            continue
        topic_match = _TOPIC.match(line)
        if topic_match and not line.startswith(" "):
            flush()
            topic = topic_match.group("topic").strip()
            continue
        one = _ONE_LINE.match(line)
        if one and not line.startswith("       "):
            flush()
            kind = one.group("kind").strip()
            if kind in _DESCRIPTORS:
                continue
            names = [n.strip() for n in one.group("names").split(" OR ")]
            events.append(EventInfo(names[0], tuple(names[1:]), kind))
            continue
        name = _NAME_ONLY.match(line)
        if name and not line.startswith("     "):
            flush()
            pending = EventInfo(name.group("name"), (), topic)
            continue
        if pending is not None and line.startswith("     "):
            description.append(line.strip())
    flush()
    return events


def matches(event: EventInfo, query: str) -> bool:
    """Case-insensitive substring match on the name, aliases, kind and description."""
    needle = query.lower()
    haystack = " ".join((event.name, *event.aliases, event.kind, event.description)).lower()
    return all(word in haystack for word in needle.split())


def unlisted_generic_events(listed: Sequence[EventInfo], query: str) -> list[EventInfo]:
    """The generic hardware events matching `query`, marked not countable, when `perf list`
    shows no hardware event at all (no PMU, as in most VMs): a search for `cycles` then says why
    it cannot be counted rather than finding nothing. Where the list shows hardware events, perf
    has already left out the ones this PMU cannot count, and nothing is added."""
    if any(event.kind == HARDWARE_KIND for event in listed):
        return []
    shown = {name for event in listed for name in (event.name, *event.aliases)}
    unlisted = []
    for name, aliases in GENERIC_HARDWARE_EVENTS:
        event = EventInfo(name, aliases, HARDWARE_KIND, "", Countable.NO, NO_PMU)
        if shown.isdisjoint((name, *aliases)) and matches(event, query):
            unlisted.append(event)
    return unlisted


def with_trial(event: EventInfo, tried: tuple[Countable, str | None]) -> EventInfo:
    """`event` marked with what counting it once said; a missing PMU stays the reason it cannot
    be counted (perf itself only says `not supported`)."""
    countable, reason = tried
    if countable is Countable.NO and event.reason == NO_PMU:
        return replace(event, countable=countable)
    return replace(event, countable=countable, reason=reason)


def list_events(runner: ProcessRunner, *, perf: str | None = None) -> list[EventInfo]:
    perf = perf or find_perf(runner)
    result = runner.run(LaunchSpec(argv=(perf, "list", "--long-desc")), timeout_s=120)
    if not result.ok:
        raise ToolUnavailableError(
            f"perf list failed ({result.describe_failure()})", detail=result.stderr[-2000:]
        )
    return parse_perf_list(result.stdout)


def try_events(
    runner: ProcessRunner, names: Sequence[str], *, perf: str | None = None
) -> dict[str, tuple[Countable, str | None]]:
    """Count each event once on `true`: yes, or no with the reason."""
    probe = probe_stat(runner, names, perf=perf or find_perf(runner))
    verdicts: dict[str, tuple[Countable, str | None]] = {
        refused.event: (Countable.NO, _refusal_reason(refused)) for refused in probe.refused
    }
    for name in probe.accepted:
        count = probe.counts.get(name)
        if count is None or count.availability is Availability.NOT_SUPPORTED:
            verdicts[name] = (Countable.NO, str(Availability.NOT_SUPPORTED))
        else:
            verdicts[name] = (Countable.YES, None)
    return verdicts


def _refusal_reason(refused: RefusedEvent) -> str:
    if refused.refusal is Refusal.PERMISSION:
        return str(Availability.PERMISSION)
    if refused.refusal is Refusal.UNKNOWN_EVENT:
        return f"{Availability.UNKNOWN_EVENT}: {refused.message}"
    return f"perf stat {refused.message}"


def search_events(
    query: str,
    *,
    runner: ProcessRunner | None = None,
    try_counting: bool = True,
    batch: int = 25,
    perf: str | None = None,
) -> list[EventInfo]:
    """Events whose name, kind or description contains every word of `query`, each marked with
    whether this machine can count it (tried with `perf stat` on `true`). Generic hardware
    events perf list leaves out (no PMU) are included, marked not countable."""
    found = find_events(query, runner=runner, try_counting=try_counting, batch=batch, perf=perf)
    return list(found.events)


def find_events(
    query: str,
    *,
    runner: ProcessRunner | None = None,
    try_counting: bool = True,
    batch: int = 25,
    perf: str | None = None,
) -> EventSearch:
    """:func:`search_events`, with whether this machine has a PMU (to say why nothing matched)."""
    runner = runner or SubprocessRunner()
    perf = perf or find_perf(runner)
    listed = list_events(runner, perf=perf)
    pmu = any(event.kind == HARDWARE_KIND for event in listed)
    found = unlisted_generic_events(listed, query) + [e for e in listed if matches(e, query)]
    if not try_counting:
        return EventSearch(query, tuple(found), pmu)
    tried: dict[str, tuple[Countable, str | None]] = {}
    candidates = [e.name for e in found if "<" not in e.name][:_MAX_TRIED]
    for start in range(0, len(candidates), batch):
        tried.update(try_events(runner, candidates[start : start + batch], perf=perf))
    tried_found = [with_trial(e, tried[e.name]) if e.name in tried else e for e in found]
    return EventSearch(query, tuple(tried_found), pmu)
