"""A diagnosis is a claim about *why* two variants differ, with the evidence a user can check.

The explanation lenses (instructions, asm, profile) put their claims in a comparison's
`diagnoses` JSON field. A claim is made only from evidence (debug info, sampled call graphs,
symbols, disassembly), never from arithmetic on per-function deltas, and never from too few
samples: the known-answer corpus (tests/corpus) counts every claim it did not expect as a false
diagnosis.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Claim(enum.StrEnum):
    """What a lens claims changed about a function between baseline and variant."""

    INLINED = "inlined"  # the function's code is inlined into its caller in the variant only
    OUTLINED = "outlined"  # inlined in the baseline, an out-of-line call in the variant
    CALLEE_CHANGED = "callee_changed"  # a call site calls another function (detail: from, to)
    DISPATCH_CHANGED = "dispatch_changed"  # another member of a dispatch family ran (from, to)
    CODE_CHANGED = "code_changed"  # the executed function's normalised code differs
    VECTOR_WIDTH_CHANGED = "vector_width_changed"  # widest vector register used (from, to bits)
    APPEARED = "appeared"  # executed/sampled in the variant only
    DISAPPEARED = "disappeared"  # executed/sampled in the baseline only


# the claims that one function ran in place of another (detail: from, to), whichever lens made
# them: the explanation joins such a pair into one cause of their net change
REPLACING: tuple[Claim, ...] = (Claim.DISPATCH_CHANGED, Claim.CALLEE_CHANGED)


@dataclass(frozen=True, kw_only=True)
class Replacement:
    """One function ran in place of another: a replacing claim's `from` and `to`."""

    old: str  # what ran in the baseline
    new: str  # ... and in its place in the variant


@dataclass(frozen=True)
class VectorWidths:
    """A function's widest vector register in bits, on each side (None: no vector register)."""

    baseline_bits: int | None
    variant_bits: int | None


@dataclass(frozen=True)
class Diagnosis:
    """One claim about one function, with the evidence a user can check."""

    claim: Claim
    function: str  # a readable identity: demangled, clone suffixes folded
    evidence: tuple[str, ...]  # short sentences a user can check with nm/objdump/perf/addr2line
    samples: int | None = None  # the samples the claim rests on, where sampling is involved
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def replacement(self) -> Replacement | None:
        """The pair a replacing claim names (both functions known), otherwise None."""
        old, new = self.detail.get("from"), self.detail.get("to")
        if self.claim not in REPLACING or not old or not new:
            return None
        return Replacement(old=str(old), new=str(new))

    @property
    def vector_widths(self) -> VectorWidths | None:
        """The widths a vector_width_changed claim names, otherwise None."""
        if self.claim is not Claim.VECTOR_WIDTH_CHANGED:
            return None
        return VectorWidths(self.detail.get("from"), self.detail.get("to"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "claim": str(self.claim),
            "function": self.function,
            "evidence": list(self.evidence),
            "samples": self.samples,
        }
        if self.detail:
            out["detail"] = dict(self.detail)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Diagnosis:
        """The diagnosis `to_json` wrote."""
        return cls(
            claim=Claim(data["claim"]),
            function=str(data.get("function") or ""),
            evidence=tuple(data.get("evidence") or ()),
            samples=data.get("samples"),
            detail=dict(data.get("detail") or {}),
        )
