"""The instructions part of a comparison: the per-iteration counts, the function table, the
inlining claims and layers, as the JSON contract names them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.lenses.instructions.explain import FunctionDelta
from perflab.lenses.instructions.inlining import (
    CannotTell,
    InliningChange,
    ReplacedCall,
)
from perflab.lenses.instructions.layers import LayerDelta
from perflab.tool_output.callgrind import INSTRUCTIONS_EVENT


@dataclass(frozen=True)
class InstructionsDetails:
    """The instructions part of a comparison's JSON (the contract names are kept)."""

    baseline_per_iteration: float
    variant_per_iteration: float
    functions: tuple[FunctionDelta, ...]
    inlining: tuple[InliningChange, ...]
    layers: tuple[LayerDelta, ...] = ()
    attribution: str = "callgrind"  # or "inline-aware": costs re-attributed via debug info
    # callees the variant calls in place of the baseline's (callee_changed diagnoses)
    replacements: tuple[ReplacedCall, ...] = ()
    baseline_repeats: tuple[float, ...] = ()
    variant_repeats: tuple[float, ...] = ()
    event: str = INSTRUCTIONS_EVENT
    max_functions: int = 50
    equivalence_band: float | None = None
    cannot_tell: tuple[CannotTell, ...] = ()
    programs: Mapping[str, str] = field(default_factory=dict)  # side -> the program's file name
    identical_objects: tuple[str, ...] = ()  # byte-identical in both variants
    # each worker process's level (median of its repeats), when a variant had several
    baseline_processes: tuple[float, ...] = ()
    variant_processes: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "baseline_per_iteration": self.baseline_per_iteration,
            "variant_per_iteration": self.variant_per_iteration,
            "callgrind_event": self.event,
            "attribution": self.attribution,
            "baseline_repeats": list(self.baseline_repeats),
            "variant_repeats": list(self.variant_repeats),
            "functions": [function_json(d) for d in self._shown_functions()],
            "inlining_changes": [change.to_json() for change in self.inlining],
            "diagnoses": [change.diagnosis().to_json() for change in self.inlining]
            + [replaced.diagnosis().to_json() for replaced in self.replacements],
            "cannot_tell": [entry.to_json() for entry in self.cannot_tell],
        }
        if self.equivalence_band is not None:
            out["equivalence_band"] = self.equivalence_band
        if self.programs:
            out["programs"] = dict(self.programs)
        if self.identical_objects:
            out["identical_objects"] = list(self.identical_objects)
        if len(self.baseline_processes) > 1 or len(self.variant_processes) > 1:
            out["baseline_processes"] = list(self.baseline_processes)
            out["variant_processes"] = list(self.variant_processes)
        if self.layers:
            out["layers"] = [layer.to_json() for layer in self.layers]
        return out

    def _shown_functions(self) -> tuple[FunctionDelta, ...]:
        """The `max_functions` largest changes, and every row that says the CPU ran other code
        (its count did not change: it would fall below the cap)."""
        shown = self.functions[: self.max_functions]
        return shown + tuple(d for d in self.functions[self.max_functions :] if d.cpu_ran)


def details_with_cpu_ran(
    details: object, ran: Mapping[str, tuple[str, str]]
) -> InstructionsDetails | None:
    """`details` with each function valgrind ran while the CPU ran another dispatch target
    (`ran`: function -> the CPU's (baseline, variant)) saying so (`FunctionDelta.cpu_ran`), so
    the row says it where it is shown; None when `details` are not this lens's."""
    if not isinstance(details, InstructionsDetails):
        return None
    functions = tuple(
        replace(d, cpu_ran=ran[d.name]) if d.name in ran else d for d in details.functions
    )
    return replace(details, functions=functions)


def function_json(d: FunctionDelta) -> dict[str, Any]:
    """One function's row as the details' JSON holds it: its counts, self and inclusive, and
    what differs between the two builds where something does (its parts, signature, object,
    spelling, what the CPU ran instead)."""
    out: dict[str, Any] = {
        "name": d.name,
        "object": d.object,
        "file": d.file,
        "baseline": d.baseline_self,
        "variant": d.variant_self,
        "delta": d.delta_self,
        "baseline_inclusive": d.baseline_inclusive,
        "variant_inclusive": d.variant_inclusive,
        "delta_inclusive": d.delta_inclusive,
        "presence": str(d.presence),
    }
    if d.parts:
        out["parts"] = list(d.parts)
    if d.baseline_name is not None:
        out["signature_changed"] = {"from": d.baseline_name, "to": d.name}
    if d.variant_object is not None:
        out["variant_object"] = d.variant_object
    if d.variant_spelling is not None:
        out["spelled_in_variant"] = {"name": d.variant_spelling[0], "why": d.variant_spelling[1]}
    if d.cpu_ran is not None:
        out["cpu_ran"] = {"baseline": d.cpu_ran[0], "variant": d.cpu_ran[1]}
    return out
