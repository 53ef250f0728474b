"""The counters lens's findings of one benchmark beyond its comparisons: the events it could not
count, the metrics derived from each variant's counts, and AVX-512 use in the measured region.
Its section reads them by attribute; the JSON document carries them as its top-level
`unavailable_events`, `derived_metrics` and `avx512`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perflab.tool_output.perf_stat import Availability, DerivedMetric


@dataclass(frozen=True)
class UnavailableEvent:
    """An event the counters lens could not count, why, and the fix when there is one."""

    event: str
    reason: Availability
    message: str = ""
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.event, "reason": str(self.reason)}
        if self.message:
            out["message"] = self.message
        if self.hint:
            out["hint"] = self.hint
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnavailableEvent:
        return cls(
            str(data["event"]),
            Availability(data["reason"]),
            data.get("message", ""),
            data.get("hint"),
        )


@dataclass(frozen=True)
class VariantMetric:
    """A metric derived from one variant's event totals (IPC, a miss rate ...)."""

    variant: str
    metric: DerivedMetric

    def to_json(self, benchmark: str) -> dict[str, Any]:
        return {
            "benchmark": benchmark,
            "variant": self.variant,
            "name": self.metric.name,
            "value": self.metric.value,
            "formula": self.metric.formula,
            "unit": self.metric.unit,
        }


@dataclass(frozen=True)
class Avx512Use:
    """AVX-512 register state seen live in one variant's samples (/proc/PID/arch_status), in
    the measured region and around the empty-loop control."""

    variant: str
    supported: bool  # every process's kernel reported it
    samples: int
    samples_with_avx512: int
    control_samples: int
    control_with_avx512: int

    @property
    def executed_avx512(self) -> bool:
        return self.supported and self.samples_with_avx512 > 0

    @property
    def attributable(self) -> bool:
        """Seen only in the measured region: the state is the statement's, not the worker's."""
        return self.supported and self.control_with_avx512 == 0

    def to_json(self, benchmark: str) -> dict[str, Any]:
        return {
            "benchmark": benchmark,
            "variant": self.variant,
            "supported": self.supported,
            "samples": self.samples,
            "samples_with_avx512": self.samples_with_avx512,
            "control_samples": self.control_samples,
            "control_with_avx512": self.control_with_avx512,
            "executed_avx512": self.executed_avx512,
            "attributable": self.attributable,
        }


@dataclass(frozen=True)
class CounterFindings:
    """What the counters lens found of one benchmark beside its event comparisons."""

    benchmark: str
    unavailable_events: tuple[UnavailableEvent, ...] = ()
    derived_metrics: tuple[VariantMetric, ...] = ()
    avx512: tuple[Avx512Use, ...] = ()  # the variants whose processes reported it

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "unavailable_events": [
                {**u.to_json(), "benchmark": self.benchmark} for u in self.unavailable_events
            ],
            "derived_metrics": [d.to_json(self.benchmark) for d in self.derived_metrics],
        }
        if self.avx512:  # the field is absent where no process reported it
            out["avx512"] = [a.to_json(self.benchmark) for a in self.avx512]
        return out
