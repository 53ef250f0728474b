"""What the CPU ran differently where the counting lens's tool ran the same code in both variants.
Such a tool runs other code than the CPU does (its descriptor's `blind_spot`); the vector width
changes that the lenses reading the CPU's code claim are said first, and on the counted rows
themselves. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from perflab.analyse.pair_claims import (
    call_identity,
    cpu_claiming,
    diagnoses_of,
    first_counted,
    first_of,
)
from perflab.lenses.descriptor import BlindSpot
from perflab.lenses.registry import descriptor_for
from perflab.records.accounting import Presence, ToolRows
from perflab.records.diagnosis import Claim, Diagnosis, Replacement, VectorWidths
from perflab.records.model import Comparison

SHOWN_WIDTHS = 3  # vector width changes named first in the paragraph


def counted_blind_spot(comparisons: Sequence[Comparison]) -> BlindSpot | None:
    """What the counting lens's tool hides of what the CPU runs, in its words, or None."""
    counted = first_counted(comparisons)
    return None if counted is None else descriptor_for(counted.metric).explanation.blind_spot


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
        ran = (
            f"another copy of {self.cpu_baseline} (its object defines that name more than once)"
            if self.cpu_baseline == self.cpu_variant
            else f"{self.cpu_baseline} → {self.cpu_variant}"
        )
        return f"the CPU ran {ran} ({', '.join(self.lenses)}{shape}), {counted}"


def hidden_dispatches(comparisons: Sequence[Comparison]) -> list[HiddenDispatch]:
    """The dispatch changes of one pair's profile and asm comparisons that the counting lens's
    tool did not see: neither function's count changed, and one of them ran in both variants
    under it."""
    tool = _ToolRan.of(comparisons)
    if tool is None:
        return []
    widths = _widths(comparisons)
    found = []
    for replaced, lenses in _unseen_dispatches(comparisons, tool.changed).items():
        ran, count = tool.ran_either(replaced)
        found.append(
            HiddenDispatch(
                cpu_baseline=replaced.old,
                cpu_variant=replaced.new,
                lenses=tuple(lenses),
                width=_width_words(widths.get(replaced.old)),
                tool_ran=ran,
                tool_per_iteration=count,
                tool=tool.rows.tool,
                unit=tool.rows.unit,
            )
        )
    return found


@dataclass(frozen=True)
class _ToolRan:
    """What the counting lens's tool ran in one pair: its rows, the functions (as calls,
    `call_identity`) whose count changed, and those it ran in both variants with the same count,
    each with its name as counted and its count per iteration."""

    rows: ToolRows
    changed: frozenset[str]
    ran_both: Mapping[str, tuple[str, float]]

    @classmethod
    def of(cls, comparisons: Sequence[Comparison]) -> _ToolRan | None:
        """The counting lens's rows of the pair, read; None without a counting lens's rows."""
        counted = first_counted(comparisons)
        if counted is None:
            return None
        descriptor = descriptor_for(counted.metric)
        found = descriptor.rows_of(counted)
        blind = descriptor.explanation.blind_spot
        if found is None or blind is None:
            return None
        changed = frozenset(
            call_identity(r.name)
            for r in found.rows
            if abs(r.after - r.before) >= blind.residue_per_iteration
        )
        ran_both = {
            call_identity(r.name): (r.name, r.after)
            for r in found.rows
            if r.presence is Presence.BOTH and call_identity(r.name) not in changed
        }
        return cls(found, changed, ran_both)

    def ran_either(self, replaced: Replacement) -> tuple[str, float]:
        """The function of a dispatch pair the tool ran in both variants (the new one first),
        with its count per iteration; ("", 0.0) when it ran neither so."""
        for name in (replaced.new, replaced.old):
            ran = self.ran_both.get(call_identity(name))
            if ran is not None:
                return ran
        return "", 0.0


def _unseen_dispatches(
    comparisons: Sequence[Comparison], changed: frozenset[str]
) -> dict[Replacement, list[str]]:
    """The dispatch pairs the lenses reading the CPU's code claim (each with the lenses that
    claim it) where neither function's count changed under the tool, named as calls
    (`call_identity`): one lens's tool names `f<T>` what another's names `void f<T>(int)`."""
    pairs: dict[Replacement, list[str]] = {}
    for metric in cpu_claiming():
        for diagnosis in diagnoses_of(first_of(comparisons, metric)):
            replaced = _dispatched(diagnosis)
            if replaced is None:
                continue
            if {call_identity(replaced.old), call_identity(replaced.new)} & changed:
                continue
            named = Replacement(old=call_identity(replaced.old), new=call_identity(replaced.new))
            lenses = pairs.setdefault(named, [])
            if str(metric) not in lenses:
                lenses.append(str(metric))
    return pairs


def _width_words(width: VectorWidths | None) -> str:
    """A vector width change as the sentence says it ("512 → 256-bit vectors"), or ""."""
    return f"{width.baseline_bits} → {width.variant_bits}-bit vectors" if width else ""


def _dispatched(diagnosis: Diagnosis) -> Replacement | None:
    """The pair of a dispatch_changed claim, or None for any other claim."""
    return diagnosis.replacement if diagnosis.claim is Claim.DISPATCH_CHANGED else None


@dataclass(frozen=True)
class _WidthChange:
    """A function's widest vector register changed (a lens's vector_width_changed claim)."""

    function: str  # as a call (`call_identity`)
    bits: VectorWidths
    lens: str
    samples: float


def _width_changes(comparisons: Sequence[Comparison]) -> list[_WidthChange]:
    """The asm's (and profile's) vector_width_changed claims, one per function, most sampled
    first."""
    found: dict[str, _WidthChange] = {}
    for metric in cpu_claiming(code_first=True):
        for diagnosis in diagnoses_of(first_of(comparisons, metric)):
            bits = diagnosis.vector_widths
            if bits is None:
                continue
            function = call_identity(diagnosis.function)
            samples = float(diagnosis.samples or 0.0)
            found.setdefault(function, _WidthChange(function, bits, str(metric), samples))
    return sorted(found.values(), key=lambda w: -w.samples)


def _widths(comparisons: Sequence[Comparison]) -> dict[str, VectorWidths]:
    """Function (as a call, `call_identity`) -> its widest vector register in bits on each side."""
    return {w.function: w.bits for w in _width_changes(comparisons)}


def width_lead(comparisons: Sequence[Comparison]) -> str:
    """The vector width changes, as the summary's first words: the plainest cause of a dispatch
    or -march change, which a tool's counts (its blind spot) and a short profile may miss."""
    changes = _width_changes(comparisons)
    if not changes:
        return ""
    dispatched: dict[str, str] = {}
    for metric in cpu_claiming(code_first=True):
        for diagnosis in diagnoses_of(first_of(comparisons, metric)):
            replaced = _dispatched(diagnosis)
            if replaced is not None:
                old, new = call_identity(replaced.old), call_identity(replaced.new)
                shown = old if old == new else f"{old} → {new}"
                dispatched.setdefault(call_identity(diagnosis.function), shown)
    words = []
    for change in changes[:SHOWN_WIDTHS]:
        name = dispatched.get(change.function, change.function)
        old, new = (
            f"{bits}-bit" if bits else "no"
            for bits in (change.bits.baseline_bits, change.bits.variant_bits)
        )
        words.append(f"{name}: {old} → {new} vectors ({change.lens})")
    more = len(changes) - SHOWN_WIDTHS
    return "; ".join(words) + (f"; and {more} more" if more > 0 else "") + ". "


def with_cpu_ran(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with each counted row whose function the counting lens's tool ran in
    both variants while the CPU ran another dispatch target (`hidden_dispatches`) saying what
    the CPU ran (its `BlindSpot.cpu_ran` hook), so the row says it where it is shown, not
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
