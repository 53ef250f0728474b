"""Reading what callgrind wrote for one process. That is its dumps in the order they were written,
the trigger (hint) each dump was asked with, each event's totals as the samples store them, the
per-instruction costs, and what ran (objects' identities, inline frames)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from perflab.machine.proc import ProcessRunner
from perflab.measure.callgrind.artifacts import SAMPLE_NAME
from perflab.measure.callgrind.count_options import CountOptions
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.debuginfo import frames_to_json, object_identity, symbolise
from perflab.tool_output.callgrind import (
    INSTRUCTIONS_EVENT,
    CallgrindPart,
    FunctionCosts,
    InstructionCost,
    InstructionCosts,
)
from perflab.tool_output.callgrind_format import parse_callgrind


@dataclass(frozen=True)
class DerivedEvent:
    """A stored event summed from callgrind's own events (cache misses, branch mispredicts)."""

    name: str  # sample name and Comparison.event
    components: tuple[str, ...]  # callgrind events summed
    unit: str


# stored beside the instructions (samples) where the cache simulation ran
CACHE_EVENTS: tuple[DerivedEvent, ...] = (
    DerivedEvent("D1_misses", ("D1mr", "D1mw"), "misses"),
    DerivedEvent("LL_misses", ("ILmr", "DLmr", "DLmw"), "misses"),
    DerivedEvent("branch_mispredicts", ("Bcm", "Bim"), "mispredicts"),
)


def instructions_of(parts: Sequence[CallgrindPart]) -> InstructionCosts | None:
    """The per-instruction costs of every part, None where a part has none (no --dump-instr)."""
    rows: list[InstructionCost] = []
    events: tuple[str, ...] | None = None
    for part in parts:
        if part.instructions is None:
            return None
        events = part.instructions.events
        rows.extend(part.instructions.rows)
    return None if events is None else InstructionCosts(events, tuple(rows))


def derived_totals(costs: FunctionCosts) -> dict[str, float]:
    return derived({event: costs.total(event) for event in costs.events})


def derived(by_event: Mapping[str, float]) -> dict[str, float]:
    """The stored samples' values from the totals of callgrind's events."""
    totals = {SAMPLE_NAME: by_event.get(INSTRUCTIONS_EVENT, 0.0)}
    for event in CACHE_EVENTS:
        if all(component in by_event for component in event.components):
            totals[event.name] = sum(by_event[component] for component in event.components)
    return totals


_EVENTS_LINE = re.compile(r"^events:\s*(.*?)\s*$", re.MULTILINE)
_TOTALS_LINE = re.compile(r"^totals:\s*(.*?)\s*$", re.MULTILINE)


def dump_totals(text: str) -> dict[str, float] | None:
    """Each event's total in a callgrind dump of one part, from its ``totals:`` line (the sum of
    its costs), without parsing the costs: a dump of torch with per-instruction costs takes a
    second to parse. None when the file has several parts or no such line. (``summary:`` is
    not used: it can differ from the costs' sum by a few instructions.)"""
    events = _EVENTS_LINE.findall(text)
    totals = _TOTALS_LINE.findall(text)
    if len(events) != 1 or len(totals) != 1:
        return None
    names, numbers = events[0].split(), totals[0].split()
    if len(numbers) > len(names) or not all(n.isdigit() for n in numbers):
        return None
    # trailing zero costs may be left out
    return {name: float(numbers[i]) if i < len(numbers) else 0.0 for i, name in enumerate(names)}


def totals_of(text: str) -> dict[str, float]:
    quick = dump_totals(text)
    if quick is not None:
        return derived(quick)
    return derived_totals(parse_callgrind(text).combined())


def read_dumps(directory: str, pid: int | None = None) -> list[tuple[str, str]]:
    """(file name, text) of every callgrind output file (of process `pid` only, when given: the
    children of one fork server write into one directory), in the order they were written
    (callgrind.out.PID.N for dumps, callgrind.out.PID at exit)."""

    def order(name: str) -> tuple[int, int]:
        pieces = name.split(".")
        dump = int(pieces[3]) if len(pieces) > 3 and pieces[3].isdigit() else 1 << 30
        return (int(pieces[2]) if pieces[2].isdigit() else 0, dump)

    names = sorted(
        (
            n
            for n in os.listdir(directory)
            if n.startswith("callgrind.out.") and (pid is None or n.split(".")[2] == str(pid))
        ),
        key=order,
    )
    return [(n, Path(directory, n).read_text(errors="replace")) for n in names]


def dump_hint(kind: str, repeat: int) -> str:
    return f"perflab-{kind.rsplit('.', 1)[1]}-{repeat}"


_TRIGGER = re.compile(r"^desc:\s*Trigger:\s*(.*?)\s*$", re.MULTILINE)


def trigger_of(text: str) -> str | None:
    match = _TRIGGER.search(text)
    return match.group(1) if match else None


def analysis_cache(options: CountOptions) -> AnalysisCache:
    """Where inline frames are kept by build-id (off: neither read nor written)."""
    return AnalysisCache.default(enabled=options.analysis_cache)


def symbolise_inline_frames(
    runner: ProcessRunner, instructions: InstructionCosts, cache: AnalysisCache | None = None
) -> dict[str, dict[str, list[list[object]]]]:
    """Inline frames (innermost first) of every executed address of every object with debug
    info, one symboliser process per object. JSON-ready: object -> hex address -> frames.
    Kept in the analysis `cache` under the object's identity and the addresses (the same
    statement in the same build asks the same again)."""
    out: dict[str, dict[str, list[list[object]]]] = {}
    for obj, addresses in instructions.addresses_by_object().items():
        frames = symbolise(runner, obj, addresses, cache=cache)
        if frames is not None:
            out[obj] = frames_to_json(frames)
    return out


def object_identities(paths: Iterable[str]) -> dict[str, str | None]:
    """Build-id (or content hash) of every object that ran, taken when it ran: an object
    rebuilt before the analysis must not pass for the one measured."""
    return {path: object_identity(path) for path in sorted(set(paths)) if path.startswith("/")}
