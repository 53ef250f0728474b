"""What the CPU ran differently where the counting lens's tool ran the same code in both
variants (a tool that runs other code than the CPU does: its descriptor's `blind_spot`), and
the vector width changes the lenses reading the CPU's code claim: said first, and on the
counted rows themselves. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.analyse.pair_claims import (
    cpu_claiming,
    details_of,
    first_counted,
    first_of,
    function_identity,
)
from perflab.lenses.descriptor import BlindSpot
from perflab.lenses.registry import descriptor_for
from perflab.records.diagnosis import Claim
from perflab.records.model import Comparison
from perflab.tools.symbol_names import readable

RESIDUE = 2.0  # a count per iteration below which a function's change is the handshake's
SHOWN_WIDTHS = 3  # vector width changes named first in the paragraph


def counted_blind_spot(comparisons: Sequence[Comparison]) -> BlindSpot | None:
    """What the counting lens's tool hides of what the CPU runs, in its words, or None."""
    counted = first_counted(comparisons)
    return None if counted is None else descriptor_for(counted.metric).blind_spot


@dataclass(frozen=True)
class HiddenDispatch:
    """A dispatch change the CPU made (profile, asm) where the counting lens's tool ran the
    same code in both variants: a tool that hides CPU features from the code it runs makes
    libraries that pick a kernel by them take the same path under it whatever the setting."""

    cpu_baseline: str  # what the CPU ran in the baseline
    cpu_variant: str  # ... and in the variant
    lenses: tuple[str, ...]  # the lenses that saw the change
    width: str  # "512 → 256-bit vectors", or ""
    tool_ran: str  # the function the tool ran in both variants, "" when neither
    tool_per_iteration: float = 0.0
    tool: str = ""  # the tool, as the sentence names it
    unit: str = ""  # what its count counts

    @property
    def sentence(self) -> str:
        counted = (
            f"{self.tool} ran {self.tool_ran} in both ({self.tool_per_iteration:,.0f} "
            f"{self.unit} per iteration each)"
            if self.tool_ran
            else f"{self.tool} ran neither differently"
        )
        shape = f", {self.width}" if self.width else ""
        return (
            f"the CPU ran {self.cpu_baseline} → {self.cpu_variant} "
            f"({', '.join(self.lenses)}{shape}), {counted}"
        )


def hidden_dispatches(comparisons: Sequence[Comparison]) -> list[HiddenDispatch]:
    """The dispatch changes of one pair's profile and asm comparisons that the counting lens's
    tool did not see: neither function's count changed, and one of them ran in both variants
    under it."""
    counted = first_counted(comparisons)
    found = None if counted is None else descriptor_for(counted.metric).rows_of(counted)
    if found is None:
        return []
    rows = [(r.name, r.before, r.after, r.presence) for r in found.rows]
    changed = {
        function_identity(name) for name, before, after, _ in rows if abs(after - before) >= RESIDUE
    }
    ran_both = {
        function_identity(name): (name, after)
        for name, _, after, presence in rows
        if presence == "both" and function_identity(name) not in changed
    }
    pairs: dict[tuple[str, str], list[str]] = {}
    widths = _widths(comparisons)
    for metric in cpu_claiming():
        for diagnosis in details_of(first_of(comparisons, metric)).get("diagnoses") or []:
            if diagnosis.get("claim") != Claim.DISPATCH_CHANGED:
                continue
            detail = diagnosis.get("detail") or {}
            old, new = str(detail.get("from") or ""), str(detail.get("to") or "")
            if (
                not old
                or not new
                or function_identity(old) in changed
                or function_identity(new) in changed
            ):
                continue
            pairs.setdefault((old, new), []).append(str(metric))
    out = []
    for (old, new), lenses in pairs.items():
        under, count = next(
            (
                ran_both[function_identity(name)]
                for name in (new, old)
                if function_identity(name) in ran_both
            ),
            ("", 0.0),
        )
        width = widths.get(function_identity(old))
        out.append(
            HiddenDispatch(
                readable(old),
                readable(new),
                tuple(lenses),
                f"{width[0]} → {width[1]}-bit vectors" if width else "",
                under,
                count,
                found.tool,
                found.unit,
            )
        )
    return out


@dataclass(frozen=True)
class _WidthChange:
    """A function's widest vector register changed (a lens's vector_width_changed claim)."""

    function: str  # clones folded
    bits: tuple[Any, Any]  # (baseline, variant); None: no vector register
    lens: str
    samples: float


def _width_changes(comparisons: Sequence[Comparison]) -> list[_WidthChange]:
    """The asm's (and profile's) vector_width_changed claims, one per function, most sampled
    first."""
    found: dict[str, _WidthChange] = {}
    for metric in cpu_claiming(code_first=True):
        for diagnosis in details_of(first_of(comparisons, metric)).get("diagnoses") or []:
            if diagnosis.get("claim") != Claim.VECTOR_WIDTH_CHANGED:
                continue
            detail = diagnosis.get("detail") or {}
            function = function_identity(str(diagnosis.get("function")))
            samples = float(diagnosis.get("samples") or 0.0)
            bits = (detail.get("from"), detail.get("to"))
            found.setdefault(function, _WidthChange(function, bits, str(metric), samples))
    return sorted(found.values(), key=lambda w: -w.samples)


def _widths(comparisons: Sequence[Comparison]) -> dict[str, tuple[Any, Any]]:
    """Function (clones folded) -> (baseline, variant) widest vector register in bits."""
    return {w.function: w.bits for w in _width_changes(comparisons)}


def width_lead(comparisons: Sequence[Comparison]) -> str:
    """The vector width changes, as the summary's first words: the plainest cause of a dispatch
    or -march change, which a tool's counts (its blind spot) and a short profile may miss."""
    changes = _width_changes(comparisons)
    if not changes:
        return ""
    dispatched: dict[str, str] = {}
    for metric in cpu_claiming(code_first=True):
        for diagnosis in details_of(first_of(comparisons, metric)).get("diagnoses") or []:
            detail = diagnosis.get("detail") or {}
            if diagnosis.get("claim") == Claim.DISPATCH_CHANGED and detail.get("from"):
                function = function_identity(str(diagnosis.get("function")))
                shown = f"{readable(str(detail['from']))} → {readable(str(detail.get('to')))}"
                dispatched.setdefault(function, shown)
    words = []
    for change in changes[:SHOWN_WIDTHS]:
        name = dispatched.get(change.function, change.function)
        old, new = (f"{bits}-bit" if bits else "no" for bits in change.bits)
        words.append(f"{name}: {old} → {new} vectors ({change.lens})")
    more = len(changes) - SHOWN_WIDTHS
    return "; ".join(words) + (f"; and {more} more" if more > 0 else "") + ". "


def with_cpu_ran(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with each counted row whose function the counting lens's tool ran in
    both variants while the CPU ran another dispatch target (`hidden_dispatches`) saying what
    the CPU ran (its descriptor's `cpu_ran` hook), so the row says it where it is shown, not
    only the summary."""
    groups: dict[tuple[str, str, str], list[Comparison]] = {}
    for comparison in comparisons:
        key = (comparison.benchmark, comparison.baseline, comparison.variant)
        groups.setdefault(key, []).append(comparison)
    annotated: dict[int, Comparison] = {}
    for mine in groups.values():
        ran = {h.tool_ran: (h.cpu_baseline, h.cpu_variant) for h in hidden_dispatches(mine)}
        ran.pop("", None)
        if not ran:
            continue
        for comparison in mine:
            if comparison.event is not None:
                continue
            details = descriptor_for(comparison.metric).with_cpu_ran(comparison.details, ran)
            if details is not None:
                annotated[id(comparison)] = replace(comparison, details=details)
    return [annotated.get(id(c), c) for c in comparisons]
