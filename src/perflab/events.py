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

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.analysis.perf_stat import (
    Availability,
    counts_for_requested,
    find_unknown_event,
    is_permission_failure,
    parse_stat_csv,
)
from perflab.collectors.perf_control import find_perf
from perflab.errors import ToolUnavailableError
from perflab.proc import LaunchSpec, ProcessRunner, SubprocessRunner

_MAX_TRIED = 200  # trying events costs one `perf stat` per batch; huge result lists are not tried


class Countable(enum.StrEnum):
    YES = "yes"
    NO = "no"
    UNTRIED = "untried"  # descriptors (rNNN, mem:<addr>) and results beyond the try limit


@dataclass(frozen=True)
class EventInfo:
    name: str
    aliases: tuple[str, ...] = ()
    kind: str = ""  # `Hardware event`, `Tracepoint event`, or the vendor topic (`cache`, ...)
    description: str = ""
    countable: Countable = Countable.UNTRIED
    reason: str | None = None  # why not countable (`not supported`, `unknown event` ...)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "aliases": list(self.aliases),
            "kind": self.kind,
            "description": self.description,
            "countable": str(self.countable),
        }
        if self.reason:
            out["reason"] = self.reason
        return out


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


def list_events(runner: ProcessRunner, *, perf: str | None = None) -> list[EventInfo]:
    perf = perf or find_perf()
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
    perf = perf or find_perf()
    verdicts: dict[str, tuple[Countable, str | None]] = {}
    remaining = list(dict.fromkeys(names))
    while remaining:
        argv = (perf, "stat", "-x,", "-e", ",".join(remaining), "--", "true")
        result = runner.run(LaunchSpec(argv=argv), timeout_s=60)
        if result.ok:
            counts = counts_for_requested(parse_stat_csv(result.stderr), remaining)
            for name in remaining:
                count = counts.get(name)
                if count is None or count.availability is Availability.NOT_SUPPORTED:
                    verdicts[name] = (Countable.NO, str(Availability.NOT_SUPPORTED))
                else:
                    verdicts[name] = (Countable.YES, None)
            return verdicts
        unknown = find_unknown_event(result.stderr, remaining)
        if is_permission_failure(result.stderr):
            culprit, reason = remaining[0], str(Availability.PERMISSION)
        elif unknown is not None and unknown.event in remaining:
            culprit, reason = unknown.event, f"{Availability.UNKNOWN_EVENT}: {unknown.message}"
        else:
            culprit, reason = remaining[0], f"perf stat {result.describe_failure()}"
        verdicts[culprit] = (Countable.NO, reason)
        remaining = [n for n in remaining if n != culprit]
    return verdicts


def search_events(
    query: str,
    *,
    runner: ProcessRunner | None = None,
    try_counting: bool = True,
    batch: int = 25,
) -> list[EventInfo]:
    """Events whose name, kind or description contains every word of `query`, each marked with
    whether this machine can count it (tried with `perf stat` on `true`)."""
    runner = runner or SubprocessRunner()
    perf = find_perf()
    found = [e for e in list_events(runner, perf=perf) if matches(e, query)]
    if not try_counting:
        return found
    tried: dict[str, tuple[Countable, str | None]] = {}
    candidates = [e.name for e in found if "<" not in e.name][:_MAX_TRIED]
    for start in range(0, len(candidates), batch):
        tried.update(try_events(runner, candidates[start : start + batch], perf=perf))
    return [
        replace(e, countable=tried[e.name][0], reason=tried[e.name][1]) if e.name in tried else e
        for e in found
    ]
