"""Parse what `perf stat` prints into typed per-event counts, and derive metrics from them. Pure.

Formats (perf-stat(1), "CSV FORMAT" and "JSON FORMAT"):

- `-x SEP`: one line per event: [timestamp with -I] value, unit, event, run time of the counter
  (ns), percentage of the measurement time the counter was running, [variance with -r], metric
  value, metric unit. The value is `<not supported>` or `<not counted>` when there is no count.
  perf already scales multiplexed counts by enabled/running time; the percentage says how much was
  measured.
  Raw event names (`cpu/event=0x3c,umask=0/`) may contain the separator, so the event name is found
  by its position before the trailing numeric fields, not by splitting blindly.
- `-j`: one JSON object per line with "counter-value" (a string), "unit", "event", "event-runtime",
  "pcnt-running", "metric-value", "metric-unit".

`perf stat` exits 129 when an event name does not parse and prints `event syntax error: '<spec>'`
with a `\\___` marker under the offending position; :func:`find_unknown_event` maps it back to the
event name. Without permission for kernel events perf silently counts `name:u` instead; such counts
are marked `user_only`.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

NS_PER_MS = 1_000_000  # perf stat reports task-clock in ms


class Availability(enum.StrEnum):
    """Whether an event produced a usable count, and if not, why."""

    COUNTED = "counted"
    MULTIPLEXED = "multiplexed"  # counted part of the time; the value is scaled by perf
    NOT_SUPPORTED = "not supported"  # perf exits 0 but the PMU (or VM) has no such counter
    NOT_COUNTED = "not counted"  # the counter never got scheduled (too many events, or disabled)
    UNKNOWN_EVENT = "unknown event"  # perf does not know the name (exit 129)
    PERMISSION = "permission"  # perf_event_paranoid or a missing capability forbids it

    @property
    def usable(self) -> bool:
        return self in (Availability.COUNTED, Availability.MULTIPLEXED)


@dataclass(frozen=True)
class EventCount:
    """One event as perf reported it. `value` is perf's (scaled) count; clock events reported in
    msec are converted to ns so that every value is an integer-like count of something."""

    event: str  # as perf printed it (e.g. `cycles:u`, `cpu_core/cycles/`)
    availability: Availability
    value: float | None
    unit: str
    runtime_ns: int | None = None
    running_fraction: float | None = None  # 1.0 = counted the whole time; <1 multiplexed

    @property
    def user_only(self) -> bool:
        """perf fell back to user-space counting (kernel excluded) for lack of permission."""
        return self.event.endswith(":u")


@dataclass(frozen=True)
class StatOutput:
    """The counts one `perf stat` printed, one per event."""

    counts: tuple[EventCount, ...]

    def by_event(self) -> dict[str, EventCount]:
        return {count.event: count for count in self.counts}


@dataclass(frozen=True)
class UnknownEvent:
    """An event name perf refused (exit 129), with perf's own reason."""

    event: str
    message: str


_NOT_COUNTED = {
    "<not supported>": Availability.NOT_SUPPORTED,
    "<not counted>": Availability.NOT_COUNTED,
}
# a running fraction this close to 1 is rounding in perf's output, not multiplexing
_MULTIPLEX_EPSILON = 1e-6


def _to_float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _is_int(text: str) -> bool:
    return text.strip().isdigit()


def _make_count(
    event: str, value_text: str, unit: str, runtime_text: str, percent_text: str
) -> EventCount | None:
    value_text = value_text.strip()
    percent = _to_float(percent_text)
    runtime = int(runtime_text) if _is_int(runtime_text) else None
    fraction = None if percent is None else percent / 100.0
    if value_text in _NOT_COUNTED:
        return EventCount(event, _NOT_COUNTED[value_text], None, unit, runtime, fraction)
    value = _to_float(value_text)
    if value is None:
        return None
    if unit == "msec":  # task-clock and cpu-clock
        value, unit = value * NS_PER_MS, "ns"
    multiplexed = fraction is not None and fraction < 1.0 - _MULTIPLEX_EPSILON
    if fraction is not None and fraction <= 0.0:
        # perf prints a zero with 0% running in some versions instead of <not counted>
        return EventCount(event, Availability.NOT_COUNTED, None, unit, runtime, fraction)
    availability = Availability.MULTIPLEXED if multiplexed else Availability.COUNTED
    return EventCount(event, availability, value, unit, runtime, fraction)


def _parse_csv_line(line: str, separator: str, interval: bool) -> EventCount | None:
    fields = line.split(separator)
    if interval:
        fields = fields[1:]
    if len(fields) < 5:
        return None
    value_text, unit, rest = fields[0], fields[1], fields[2:]
    # The event name ends right before "<run time ns>,<percent running>": a name may contain the
    # separator (raw PMU syntax), but no part of it is a bare integer followed by a bare number.
    for end in range(1, len(rest) - 1):
        if _is_int(rest[end]) and _to_float(rest[end + 1]) is not None:
            event = separator.join(rest[:end])
            return _make_count(event, value_text, unit, rest[end], rest[end + 1])
    return None


def parse_stat_csv(text: str, *, separator: str = ",", interval: bool = False) -> StatOutput:
    """Parse `perf stat -x SEP` output (comments, blank lines and `Events enabled` lines skipped).

    With `interval=True` (`-I`), every line starts with a timestamp; the counts of all intervals
    are returned in order."""
    counts = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or separator not in line:
            continue
        count = _parse_csv_line(line, separator, interval)
        if count is not None:
            counts.append(count)
    return StatOutput(tuple(counts))


def parse_stat_json(text: str) -> StatOutput:
    """Parse `perf stat -j` output: one JSON object per line."""
    counts = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or "event" not in record:
            continue
        count = _make_count(
            str(record["event"]),
            str(record.get("counter-value", "")),
            str(record.get("unit", "")),
            str(record.get("event-runtime", "")),
            str(record.get("pcnt-running", "")),
        )
        if count is not None:
            counts.append(count)
    return StatOutput(tuple(counts))


def split_event_list(spec: str) -> list[tuple[int, str]]:
    """Split an `-e` argument at top-level commas, keeping `pmu/a=1,b=2/` terms and `{a,b}`
    groups whole. Returns (start offset, event) pairs; group braces are not part of the names."""
    events: list[tuple[int, str]] = []
    depth_slash = False
    start = 0
    for index, char in enumerate(spec + ","):
        if char == "/":
            depth_slash = not depth_slash
        elif char == "," and not depth_slash:
            piece = spec[start:index]
            stripped = piece.strip().strip("{}")
            if stripped:
                offset = start + piece.index(stripped)
                events.append((offset, stripped))
            start = index + 1
    return events


_SYNTAX_ERROR = "event syntax error: '"
_MARKER = "\\___"


def find_unknown_event(stderr: str, events: Sequence[str]) -> UnknownEvent | None:
    """Which of `events` (joined with commas into one `-e`) perf rejected, from its stderr.

    perf echoes the spec (possibly cut to a window starting with `...`) and marks the failing
    position on the next line. Returns None when stderr has no syntax error for these events."""
    lines = stderr.splitlines()
    spec = ",".join(events)
    for number, line in enumerate(lines[:-1]):
        start = line.find(_SYNTAX_ERROR)
        if start < 0:
            continue
        shown = line[start + len(_SYNTAX_ERROR) :].rstrip()
        shown = shown[:-1] if shown.endswith("'") else shown
        marker_line = lines[number + 1]
        marker = marker_line.find(_MARKER)
        message = marker_line[marker + len(_MARKER) :].strip() if marker >= 0 else "parser error"
        position = marker - (start + len(_SYNTAX_ERROR)) if marker >= 0 else 0
        # perf cuts long specs to a window and overwrites its cut ends with dots
        core = shown.lstrip(".")
        shift = len(shown) - len(core)
        core = core.rstrip(".")
        window = spec.find(core) - shift if core else -1
        absolute = max(window, 0) + max(position, 0)
        return UnknownEvent(_event_at(spec, absolute), message or "parser error")
    return None


def _event_at(spec: str, offset: int) -> str:
    chosen = ""
    for start, event in split_event_list(spec):
        if start <= offset:
            chosen = event
    return chosen


_PERMISSION_PATTERNS = (
    re.compile(r"No permission to enable (\S+) event"),
    re.compile(r"Access to performance monitoring and observability operations is limited"),
    re.compile(r"perf_event_paranoid setting is"),
)


def is_permission_failure(stderr: str) -> bool:
    """perf refused to open counters for lack of permission (as opposed to a bad event)."""
    return any(pattern.search(stderr) for pattern in _PERMISSION_PATTERNS)


def permission_denied_event(stderr: str) -> str | None:
    match = _PERMISSION_PATTERNS[0].search(stderr)
    return match.group(1) if match else None


def _base_name(printed: str) -> str:
    """`cycles:u` -> `cycles`; `cpu_core/cycles/` -> `cycles` (hybrid CPUs split one event)."""
    name = printed[:-2] if printed.endswith(":u") else printed
    match = re.fullmatch(r"[A-Za-z0-9_]+/([^/=,]+)/", name)
    return match.group(1) if match else name


def counts_for_requested(output: StatOutput, requested: Iterable[str]) -> dict[str, EventCount]:
    """Map perf's printed names back to the names the user asked for.

    Exact names first; then `name:u` (user-only fallback) and `pmu/name/` lines, which are summed
    (a hybrid CPU reports `cycles` once per core type)."""
    result: dict[str, EventCount] = {}
    printed = output.counts
    for name in requested:
        exact = [c for c in printed if c.event == name]
        if exact:
            result[name] = exact[0]
            continue
        parts = [c for c in printed if _base_name(c.event).lower() == _base_name(name).lower()]
        if parts:
            result[name] = _combine(name, parts)
    return result


def _combine(name: str, parts: Sequence[EventCount]) -> EventCount:
    if len(parts) == 1:
        return parts[0]
    usable = [p for p in parts if p.availability.usable and p.value is not None]
    if not usable:
        return parts[0]
    fractions = [p.running_fraction for p in usable if p.running_fraction is not None]
    fraction = min(fractions) if fractions else None
    multiplexed = any(p.availability is Availability.MULTIPLEXED for p in usable)
    return EventCount(
        event=parts[0].event if all(p.user_only for p in parts) else name,
        availability=Availability.MULTIPLEXED if multiplexed else Availability.COUNTED,
        value=sum(p.value for p in usable if p.value is not None),
        unit=usable[0].unit,
        runtime_ns=sum(p.runtime_ns or 0 for p in usable),
        running_fraction=fraction,
    )


# --- derived metrics --------------------------------------------------------------------------

_ALIASES: Mapping[str, tuple[str, ...]] = {
    "cycles": ("cycles", "cpu-cycles", "cpu_clk_unhalted.thread", "cpu_clk_unhalted.core"),
    "instructions": ("instructions", "inst_retired.any", "ex_ret_instr"),
    "task-clock": ("task-clock",),
    "branches": ("branches", "branch-instructions"),
    "branch-misses": ("branch-misses",),
    "cache-references": ("cache-references",),
    "cache-misses": ("cache-misses",),
    "L1-dcache-loads": ("L1-dcache-loads",),
    "L1-dcache-load-misses": ("L1-dcache-load-misses",),
}

# Intel server cores (Skylake-SP .. Ice Lake-SP): cycles spent under each frequency licence.
# lvl1 = AVX2-heavy / AVX-512-light, lvl2 = AVX-512-heavy.
LICENCE_EVENTS: Mapping[str, str] = {
    "core_power.lvl1_turbo_license": "licence-1 cycle fraction",
    "core_power.lvl2_turbo_license": "licence-2 cycle fraction",
}


@dataclass(frozen=True)
class DerivedMetric:
    """A metric computed from event counts (IPC, miss rates), with the formula that made it."""

    name: str
    value: float
    formula: str
    unit: str = ""


def _lookup(totals: Mapping[str, float], canonical: str) -> float | None:
    lowered = {_base_name(k).lower(): v for k, v in totals.items()}
    for alias in _ALIASES.get(canonical, (canonical,)):
        value = lowered.get(alias.lower())
        if value is not None and math.isfinite(value):
            return value
    return None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def derived_metrics(totals: Mapping[str, float]) -> list[DerivedMetric]:
    """IPC, effective GHz, miss rates and licence fractions from event totals (only those whose
    inputs were counted). `task-clock` is in ns, as :func:`parse_stat_csv` normalises it."""
    cycles = _lookup(totals, "cycles")
    candidates = [
        ("IPC", _ratio(_lookup(totals, "instructions"), cycles), "instructions / cycles", ""),
        (
            "effective GHz",
            _ratio(cycles, _lookup(totals, "task-clock")),
            "cycles / task-clock",
            "GHz",
        ),
        (
            "branch miss rate",
            _ratio(_lookup(totals, "branch-misses"), _lookup(totals, "branches")),
            "branch-misses / branches",
            "",
        ),
        (
            "cache miss rate",
            _ratio(_lookup(totals, "cache-misses"), _lookup(totals, "cache-references")),
            "cache-misses / cache-references",
            "",
        ),
        (
            "L1d load miss rate",
            _ratio(_lookup(totals, "L1-dcache-load-misses"), _lookup(totals, "L1-dcache-loads")),
            "L1-dcache-load-misses / L1-dcache-loads",
            "",
        ),
    ]
    for event, label in LICENCE_EVENTS.items():
        candidates.append((label, _ratio(_lookup(totals, event), cycles), f"{event} / cycles", ""))
    return [
        DerivedMetric(name, value, formula, unit)
        for name, value, formula, unit in candidates
        if value is not None
    ]
