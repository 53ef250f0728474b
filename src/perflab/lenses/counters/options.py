"""The counters lens's options, declared for its descriptor (the CLI options, experiment-file keys
and API keywords are derived from them), and their typed values in a run's settings."""

from __future__ import annotations

from perflab.lenses.counters.metric import COUNTERS
from perflab.records.settings import LensOption, SettingKind, Settings, SettingSpec

EVENTS = LensOption(
    "events",
    (),
    SettingSpec(
        SettingKind.TEXTS,
        "counters: perf event names, comma-separated",
        key="events",
        flags=("--events",),
        lens=COUNTERS,
    ),
)
OPTIONS = (EVENTS,)
# the events counted where --events names none (docs/lenses/counters.md lists them)
DEFAULT_EVENTS: tuple[str, ...] = (
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-references",
    "cache-misses",
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
)


def events_of(settings: Settings) -> tuple[str, ...]:
    """The perf events asked for (empty: the lens's defaults)."""
    value: tuple[str, ...] = EVENTS.value(settings)
    return value


def requested_events(settings: Settings) -> tuple[str, ...]:
    """The events the lens counts: those asked for, else DEFAULT_EVENTS."""
    return events_of(settings) or DEFAULT_EVENTS
