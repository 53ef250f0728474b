"""What one lens's comparison says about a pair's difference per iteration, function by
function: the part a lens hands the explanation (analyse/explanation.py) through its
descriptor's `accounts` hook, so the explanation weighs functions without reading any lens's
details."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Presence(enum.StrEnum):
    """Which side ran a function: its value is what a comparison's JSON stores."""

    BOTH = "both"
    BASELINE_ONLY = "baseline_only"
    VARIANT_ONLY = "variant_only"

    @classmethod
    def read(cls, value: object) -> Presence:
        """A stored row's presence; one that names none this perflab knows reads as both: it
        claims no function appeared or went."""
        try:
            return cls(str(value))
        except ValueError:
            return cls.BOTH


@dataclass(frozen=True, kw_only=True)
class FunctionPart:
    """One function's own cost per iteration on each side, as the lens measured it."""

    name: str  # as the lens's rows spell it (the explanation folds and reads it)
    obj: str  # the object it lies in ("a → b" where the variant's differs)
    before: float
    after: float
    presence: Presence
    evidence: str  # the lens's own figures, first of the cause's evidence
    delta: float  # after - before, as the lens computed it


@dataclass(frozen=True)
class Accounting:
    """A lens's difference per iteration and the functions it is made of."""

    source: str  # the lens whose difference it is
    unit: str  # of the difference and every part's figures
    amount: str  # what a part's figures count, in words ("self instructions", "ns")
    tool: str  # what measured the parts, as evidence names it ("callgrind", "perf")
    before: float
    after: float
    what: str  # the difference in words
    parts: tuple[FunctionPart, ...] = ()  # empty where `settled`
    settled: bool = False  # nothing to account for: the lens sees no difference
    # the parts count executed work (not sampled time): the same count beside a time
    # difference says the difference lies elsewhere (code placement, memory ...)
    counts_work: bool = False

    @property
    def difference(self) -> float:
        return self.after - self.before


@dataclass(frozen=True)
class CodeFacts:
    """What a lens found about a pair's code beside the difference: what it checked and found
    the same, changes in code that did not run (not causes), and where hot loops lie (handed
    through its descriptor's `code_facts` hook)."""

    unchanged: tuple[str, ...] = ()  # each in words, "(lens)" where it helps
    changed_not_run: tuple[str, ...] = ()  # "claim: function"
    misplaced: tuple[str, ...] = ()  # hot loops crossing other lines or windows, in words
    loops_compared: int = 0  # hot loops whose placement was compared
    # what the compared hot loops were found the same in, in words ("the same lines in both")
    placed_alike: str = ""


@dataclass(frozen=True)
class FunctionCount:
    """One function's count per iteration on each side, as a lens's tool ran it."""

    name: str  # as the lens's rows spell it
    before: float
    after: float
    presence: Presence


@dataclass(frozen=True)
class ToolRows:
    """Every function a lens's tool ran, counted per iteration (not only the largest changes),
    where that tool runs other code than the CPU does: what a dispatch change the CPU made is
    checked against (analyse/hidden_dispatch.py), handed through its descriptor's
    `tool_rows` hook."""

    tool: str  # what ran the rows, as a sentence names it ("<tool> ran f in both")
    unit: str  # what the rows count ("instructions")
    rows: tuple[FunctionCount, ...] = ()
