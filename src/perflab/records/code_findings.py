"""What a lens that can tell code apart saw of one pair of variants: the same code or not, and
the evidence. Each such lens gives a hook (its descriptor's `same_code`) from its comparison to
a `Finding`; `same_work.py` reads the findings together without knowing the lenses."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from perflab.records.kinds import Metric


class Seen(enum.StrEnum):
    """What a deterministic lens saw of a pair's code: the same, different, or cannot tell."""

    SAME = "same"
    DIFFERENT = "different"
    CANNOT_TELL = "cannot_tell"


@dataclass(frozen=True)
class Finding:
    """What one deterministic lens saw of one pair: the same code or not, and the evidence."""

    metric: Metric
    seen: Seen
    evidence: str = ""  # "instruction counts within 0.1%, the same 214 functions"
    reason: str = ""  # why not the same (different, or cannot tell), for reading and debugging
    # the lens counted the work executed, not only compared the code: a time difference beside
    # the same counts is not in the executed code. In words: "the instruction counts are the
    # same within 0.1% (the same 214 functions)"
    same_work: str = ""
    # the lens ran the code under valgrind, which hides AVX-512 from it: on an AVX-512 machine,
    # code that picks its path by the CPU's features ran another path than it does natively
    avx512_hidden: bool = False
    # where a time difference beside the same counts may lie, and how the lens looks there, in
    # its words: the hint of the note that says so
    look_further: str = ""
