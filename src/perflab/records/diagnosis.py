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


@dataclass(frozen=True)
class Diagnosis:
    claim: Claim
    function: str  # a readable identity: demangled, clone suffixes folded
    evidence: tuple[str, ...]  # short sentences a user can check with nm/objdump/perf/addr2line
    samples: int | None = None  # the samples the claim rests on, where sampling is involved
    detail: Mapping[str, Any] = field(default_factory=dict)

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
