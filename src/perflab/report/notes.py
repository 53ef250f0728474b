"""Notes as every format shows them: warnings first, a note said for several benchmarks or
variants once (with where and how often), and each distinct hint once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.records.model import Note, Severity


@dataclass(frozen=True)
class NoteGroup:
    """Notes that say the same thing, shown once with every place they were made."""

    severity: Severity
    message: str
    places: tuple[str, ...]  # "metric · benchmark · variant" of each note, "" for run-level
    hint: str | None  # None when an earlier group already gave the same hint
    count: int = 1  # how many notes say this

    @property
    def where(self) -> str:
        places = [p for p in self.places if p]
        if not places:
            return ""
        shown = "; ".join(places[:4])
        return shown + (f"; +{len(places) - 4} more" if len(places) > 4 else "")


def _place(note: Note) -> str:
    words = (note.metric.value if note.metric else None, note.benchmark, note.variant)
    return " · ".join(w for w in words if w)


_QUOTED = re.compile(r"'[^']*'")


def _template(message: str) -> tuple[str, str | None]:
    """A message with its first quoted name taken out: "event 'cycles' was not measured" and
    "event 'instructions' was not measured" are one finding about two names."""
    found = _QUOTED.search(message)
    if found is None:
        return message, None
    return message[: found.start()] + "{}" + message[found.end() :], found.group()


def group_notes(notes: Sequence[Note]) -> list[NoteGroup]:
    """Notes that say the same thing grouped, warnings first, each hint given once."""
    # warnings first: they are what the reader must act on
    ordered = sorted(notes, key=lambda n: n.severity is not Severity.WARNING)
    groups: dict[tuple[Severity, str, str | None], list[Note]] = {}
    names: dict[tuple[Severity, str, str | None], list[str]] = {}
    for note in ordered:
        template, name = _template(note.message)
        key = (note.severity, template if name else note.message, note.hint if name else None)
        groups.setdefault(key, []).append(note)
        if name:
            names.setdefault(key, []).append(name)
    out = []
    said: set[str] = set()
    for key, members in groups.items():
        severity, message, _ = key
        shown = list(dict.fromkeys(names.get(key, [])))
        if shown:
            message = message.replace("{}", ", ".join(shown), 1)
        hints = [n.hint for n in members if n.hint]
        hint = hints[0] if hints and hints[0] not in said else None
        if hint is not None:
            said.add(hint)
        places = tuple(dict.fromkeys(_place(n) for n in members))
        out.append(NoteGroup(severity, message, places, hint, len(members)))
    return out
