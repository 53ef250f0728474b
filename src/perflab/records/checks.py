"""Records of what this machine can measure: `perflab doctor`'s checks and `perflab events`'
findings. Records only, so the renderers format them without importing the probing code."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from perflab.records.kinds import Metric


class Status(enum.StrEnum):
    """How one doctor check came out."""

    OK = "ok"
    WARNING = "warning"  # works, or is present, but hurts the numbers
    MISSING = "missing"  # a tool or feature is absent: something cannot be measured
    INFO = "info"


@dataclass(frozen=True)
class Check:
    """One doctor check (a tool, a noise source) with what it found and how to fix it."""

    name: str
    status: Status
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": str(self.status), "detail": self.detail}
        if self.fix:
            out["fix"] = self.fix
        return out


@dataclass(frozen=True)
class LensStatus:
    """Whether a lens can run on this machine, and how to make it when it cannot."""

    lens: Metric
    available: bool
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lens": str(self.lens),
            "available": self.available,
            "detail": self.detail,
        }
        if self.fix:
            out["fix"] = self.fix
        return out


@dataclass(frozen=True)
class DoctorReport:
    """What `perflab doctor` found: each lens's availability, the tools, and the noise sources."""

    lenses: tuple[LensStatus, ...]
    tools: tuple[Check, ...]
    noise: tuple[Check, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "lenses": [lens.to_json() for lens in self.lenses],
            "tools": [check.to_json() for check in self.tools],
            "noise": [check.to_json() for check in self.noise],
        }


class Countable(enum.StrEnum):
    """Whether perf could count an event on this machine."""

    YES = "yes"
    NO = "no"
    UNTRIED = "untried"  # descriptors (rNNN, mem:<addr>) and results beyond the try limit


@dataclass(frozen=True)
class EventInfo:
    """One perf event as `perflab events` lists it: its names, kind, description and whether it
    counts."""

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


NO_PMU_NO_MATCH = (
    "this machine has no hardware PMU (a VM without a virtual one): perf lists only software, "
    "kernel and tracepoint events, so CPU-specific events (cache, uop cache, licence or power "
    "events ...) are neither listed nor countable here"
)
NO_PMU_FIX = (
    "run on bare metal, or enable a virtual PMU (KVM/libvirt: <cpu mode='host-passthrough'/> "
    "with <pmu state='on'/>); `perflab doctor` shows what counts here"
)


@dataclass(frozen=True)
class EventSearch:
    """What a search found, and whether perf listed any hardware event (a PMU exists)."""

    query: str
    events: tuple[EventInfo, ...]
    pmu_listed: bool

    @property
    def nothing_found_because(self) -> str | None:
        """Why nothing matched, when the machine is the reason."""
        return NO_PMU_NO_MATCH if not self.events and not self.pmu_listed else None
