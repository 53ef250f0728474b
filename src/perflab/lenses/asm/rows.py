"""One row of the asm comparison: a function identity, each side the code that variant executed.

A row is one function identity (fragments, clones and dispatch members folded, see
`identity`). Each side of a row is the code that variant **executed**: the family member with
the most samples, with its split-off parts, when the family has at least `MIN_RAN_SHARE` of the
variant's samples and `MIN_RAN_SAMPLES` samples; otherwise the side says it did not run (and
whether the symbol table defines it), and nothing is compared with an unexecuted copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.lenses.asm.code_diff import FunctionChange, change_sentence
from perflab.lenses.asm.identity import Role, family, fragment_role, identity
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.records.diagnosis import Claim, Diagnosis
from perflab.tool_output.object_names import object_basename

MIN_RAN_SHARE = 0.01  # a side below 1% of its variant's samples did not run for this lens
MIN_RAN_SAMPLES = 10  # ... nor one with fewer samples: claims need this many on each side


@dataclass(frozen=True)
class VariantCode:
    """One variant's stored asm artifact."""

    listings: tuple[FunctionListing, ...]
    total_cost: float
    family_samples: Mapping[str, float] = field(default_factory=dict)  # every sampled family
    defined: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # family -> "sym in obj"
    searched: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # family -> objects
    identities: Mapping[str, str | None] = field(default_factory=dict)  # object -> build-id/hash
    named: bool = False  # functions named by --symbol rather than found by samples
    # sampled functions (also those below the minimum) -> their callees, from the disassembly:
    # the call sites of callees whose caller is too cold to be listed
    call_sites: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def share(self, samples: float) -> float:
        return samples / self.total_cost if self.total_cost > 0 else 0.0

    def samples_of(self, name: str, listings: Sequence[FunctionListing]) -> float:
        from_listings = sum(listing.cost for listing in listings)
        return max(from_listings, float(self.family_samples.get(name, 0.0)))


@dataclass(frozen=True, kw_only=True)
class Side:
    """One variant's side of a function's row: the listing that ran, its parts, and its share of the
    samples."""

    primary: FunctionListing | None  # the executed member (named mode: the named symbol)
    parts: tuple[FunctionListing, ...]  # its fragments and clones, and other members that ran
    samples: float
    share: float
    total: float
    ran: bool
    why_not: str = ""  # when it did not run: in words, with what the symbol table says

    @property
    def size_bytes(self) -> int:
        if self.primary is None:
            return 0
        same = identity(self.primary.name)
        return self.primary.size_bytes + sum(
            p.size_bytes for p in self.parts if identity(p.name) == same
        )

    @property
    def calls(self) -> Counter[str]:
        """Callees of the function and its split-off parts (a `.cold` part's calls are its)."""
        calls: Counter[str] = Counter()
        if self.primary is None:
            return calls
        same = identity(self.primary.name)
        for listing in (self.primary, *self.parts):
            if identity(listing.name) == same:
                calls.update(listing.calls)
        return calls

    def parts_json(self) -> list[dict[str, Any]]:
        primary = identity(self.primary.name) if self.primary else ""
        return [
            {
                "symbol": p.symbol,
                "name": p.name,
                "role": str(fragment_role(p.name))
                if identity(p.name) == primary
                else "dispatch member",
                "size_bytes": p.size_bytes,
                "cost_share": p.cost / self.total if self.total > 0 else 0.0,
            }
            for p in self.parts
        ]

    def to_json(self) -> dict[str, Any] | None:
        if self.primary is None:
            return None
        out = self.primary.summary_json()
        out["size_bytes"] = self.size_bytes
        out["own_size_bytes"] = self.primary.size_bytes
        out["cost_share"] = self.share
        out["samples"] = self.samples
        out["ran"] = self.ran
        out["parts"] = self.parts_json()
        return out


@dataclass(frozen=True, kw_only=True)
class Row:
    """One function of the assembly diff: both sides, how its code changed, and what that change is
    claimed to mean."""

    name: str  # the readable identity (the family)
    baseline: Side
    variant: Side
    change: FunctionChange
    diagnoses: tuple[Diagnosis, ...] = ()
    notes: tuple[str, ...] = ()  # claims not made, and why
    paired_by: str = ""  # how two different functions were paired (their role), if they were
    # changes found in the code whose changed part no sample landed on in either variant (an
    # error path, a call the loop never makes): not claimed, listed apart
    not_run: tuple[Diagnosis, ...] = ()

    @property
    def hotness(self) -> float:
        return max(self.baseline.share, self.variant.share)

    @property
    def sentence(self) -> str:
        words = [self.paired_by] if self.paired_by else []
        for side, label in ((self.baseline, "baseline"), (self.variant, "variant")):
            if side.primary is None or not side.ran:
                words.append(f"{label}: {side.why_not}")
        if self.baseline.primary is not None and self.variant.primary is not None:
            if self.baseline.primary.symbol != self.variant.primary.symbol and any(
                d.claim is Claim.DISPATCH_CHANGED for d in self.diagnoses
            ):
                words.append(f"ran {self.baseline.primary.name} -> {self.variant.primary.name}")
            words.append(
                change_sentence(
                    self.change.baseline,
                    self.change.variant,
                    (self.baseline.calls, self.variant.calls),
                )
            )
        return "; ".join(words)


def group_families(code: VariantCode) -> dict[str, list[FunctionListing]]:
    groups: dict[str, list[FunctionListing]] = {}
    for listing in code.listings:
        groups.setdefault(family(listing.name), []).append(listing)
    return groups


def side_of(code: VariantCode, name: str, listings: Sequence[FunctionListing]) -> Side:
    """One variant's side of the row of family `name`: the member it executed, or why none."""
    samples = code.samples_of(name, listings)
    share = code.share(samples)
    ran = share >= MIN_RAN_SHARE and samples >= MIN_RAN_SAMPLES
    whole = [item for item in listings if fragment_role(item.name) is not Role.FRAGMENT]
    primary = max(whole or list(listings), key=lambda item: item.cost, default=None)
    if primary is None or (not ran and not code.named):
        return Side(
            primary=None,
            parts=(),
            samples=samples,
            share=share,
            total=code.total_cost,
            ran=False,
            why_not=_why_not(code, name, samples),
        )
    parts = tuple(item for item in listings if item is not primary)
    why = "" if ran else _why_not(code, name, samples)
    return Side(
        primary=primary,
        parts=parts,
        samples=samples,
        share=share,
        total=code.total_cost,
        ran=ran,
        why_not=why,
    )


def _why_not(code: VariantCode, name: str, samples: float) -> str:
    total = int(code.total_cost)
    if samples > 0:
        text = (
            f"ran below the minimum ({int(samples)} of {total} samples; a side needs "
            f"{MIN_RAN_SHARE:.0%} and {MIN_RAN_SAMPLES} samples)"
        )
    else:
        text = f"not sampled (0 of {total} samples)"
    defined = code.defined.get(name)
    if defined:
        text += f"; defined as {', '.join(defined[:3])} per the symbol table"
    elif code.searched.get(name):
        searched = [object_basename(p) for p in code.searched[name]]
        more = f" and {len(searched) - 3} more objects it loaded" if len(searched) > 3 else ""
        text += f"; not defined in {', '.join(searched[:3])}{more}"
    return text


def samples_text(samples: float, total: float) -> str:
    return f"{int(samples)} of {int(total)} samples, {samples / total:.1%}" if total else "?"
