"""Two profiles compared: per-symbol deltas, and which functions appeared or disappeared (checked
against the sampled call stacks by `profile_evidence`). Pure.

Symbols pair between variants by name only: library paths differ between builds of the same
code. A function is compared by its identity with clone suffixes folded, the instructions lens's
rule, so the lenses claim an appearance alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.tool_output.callgrind import normalise_function_name
from perflab.tool_output.perf_script import UNKNOWN
from perflab.tool_output.profile_stacks import HotSymbols

# --- differences between two profiles -------------------------------------------------------


@dataclass(frozen=True)
class SymbolDelta:
    """One symbol's self and children shares of the samples in the baseline and in the variant."""

    name: str
    object: str
    baseline_share: float  # self share
    variant_share: float
    baseline_children_share: float
    variant_children_share: float

    @property
    def delta(self) -> float:
        return self.variant_share - self.baseline_share

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "object": self.object,
            "baseline_share": self.baseline_share,
            "variant_share": self.variant_share,
            "delta": self.delta,
            "baseline_children_share": self.baseline_children_share,
            "variant_children_share": self.variant_children_share,
        }


# A function may be said to have appeared (disappeared) only when
# - it is on at least this many samples' stacks where it ran: with fewer, its share is too
#   uncertain to say anything (5 of 7 samples is a share anywhere between 29% and 96%);
APPEARANCE_MIN_SAMPLES = 20
# - it is on at least this share of the stacks there: rare, bursty events (a GC run, a page
#   fault storm) come and go between identical runs;
APPEARANCE_MIN_SHARE = 0.02
# - and the other side has enough samples that seeing it on none of them would be this
#   improbable were its share unchanged: (1 - share) ** samples.
APPEARANCE_MAX_CHANCE = 1e-3
# Where a side was recorded in several independent worker processes ("parts"), the share floor
# must also hold in each of them: a function of the code runs in every process of it, while a
# one-off (a burst in one window, something one process did) lies in one. Pooled, 22 samples
# of `__memset_avx512_unaligned_erms` in one process of identical code were a false claim (the
# glibc_strlen_tunables case of the corpus, docs/lenses/profile.md).


@dataclass(frozen=True)
class AppearanceRule:
    """The thresholds above, together: what an appearance claim needs (tests loosen them)."""

    min_samples: int = APPEARANCE_MIN_SAMPLES
    min_share: float = APPEARANCE_MIN_SHARE
    max_chance: float = APPEARANCE_MAX_CHANCE


APPEARANCE_RULE = AppearanceRule()


@dataclass(frozen=True)
class Appearance:
    """A function on the stacks of one side's samples and on none of the other's."""

    name: str
    object: str
    appeared: bool  # True: in the variant only; False: in the baseline only
    samples: int  # samples with the function on the stack, on the side where it ran
    total: int  # all samples of that side
    other_total: int  # all samples of the other side
    more_samples: int  # 0 when settled; else about how many more samples (both sides) settle it
    # (samples with the function, all samples) in each independent process of its side, where
    # the side was recorded in several; () when it was one
    parts: tuple[tuple[int, int], ...] = ()

    @property
    def settled(self) -> bool:
        return self.more_samples == 0

    @property
    def side(self) -> str:
        return "variant" if self.appeared else "baseline"

    @property
    def other_side(self) -> str:
        return "baseline" if self.appeared else "variant"

    def evidence(self) -> tuple[str, ...]:
        return (
            f"perf: {self.name} on {self.samples} of {self.total} sampled stacks ({self.side})",
            f"perf: {self.name} on none of {self.other_total} sampled stacks ({self.other_side})",
        )

    def unsettled_message(self) -> str:
        change = "appeared" if self.appeared else "disappeared"
        return (
            f"not claimed that `{self.name}` {change}: it is on {self.samples} of {self.total} "
            f"{self.side} samples and none of {self.other_total} {self.other_side} samples, too "
            f"few to tell (a claim needs {APPEARANCE_MIN_SAMPLES} samples of the function and a "
            f"chance below {APPEARANCE_MAX_CHANCE:g} of missing it on the other side); about "
            f"{self.more_samples} more samples would settle it"
        )

    def uneven_message(self) -> str:
        change = "appeared" if self.appeared else "disappeared"
        per_part = ", ".join(f"{k} of {n}" for k, n in self.parts)
        where = (
            f"not in every {self.side} process"
            if any(k == 0 for k, _ in self.parts)
            else f"under {APPEARANCE_MIN_SHARE:.0%} of some {self.side} process's samples"
        )
        return (
            f"not claimed that `{self.name}` {change}: it is on {self.samples} of {self.total} "
            f"{self.side} samples and none of {self.other_total} {self.other_side} samples, but "
            f"{where} ({per_part}); a claim needs at least {APPEARANCE_MIN_SHARE:.0%} of each "
            "process's samples: something one process did once is not the code"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "object": self.object,
            "change": "appeared" if self.appeared else "disappeared",
            "samples": self.samples,
            "total_samples": self.total,
            "other_total_samples": self.other_total,
            "more_samples_needed": self.more_samples,
        }
        if self.parts:
            out["per_process"] = [{"samples": k, "total_samples": n} for k, n in self.parts]
        return out


def even_across_parts(
    parts: Sequence[tuple[int, int]], *, min_share: float = APPEARANCE_MIN_SHARE
) -> bool:
    """Whether a function is on at least `min_share` of the samples of every independent
    process of its side ((samples with it, all samples) per process). One process, or none
    known: nothing to compare, True."""
    if len(parts) < 2:
        return True
    return all(total > 0 and samples / total >= min_share for samples, total in parts)


def samples_to_settle(
    samples: int, total: int, other_total: int, rule: AppearanceRule = APPEARANCE_RULE
) -> int | None:
    """How many more samples (both sides together) an appearance claim needs, assuming the
    function's share stays what it is: 0 when it can be made now, None when it never can (its
    share is below the rule's `min_share`)."""
    if total <= 0 or samples <= 0:
        return None
    share = samples / total
    if share < rule.min_share:
        return None
    more_here = max(0, math.ceil(rule.min_samples / share) - total)
    if share >= 1:
        needed_there = 1
    else:
        needed_there = math.ceil(math.log(rule.max_chance) / math.log1p(-share))
    more_there = max(0, needed_there - other_total)
    return more_here + more_there


@dataclass(frozen=True)
class ProfileDiff:
    """Two profiles' hot symbols paired, with what appeared or disappeared and which of those are
    claimed."""

    symbols: tuple[SymbolDelta, ...]  # hottest (in either profile) first
    appeared: tuple[str, ...] = field(default=())
    disappeared: tuple[str, ...] = field(default=())
    unsettled: tuple[Appearance, ...] = field(default=())  # seen on one side, too few samples
    claims: tuple[Appearance, ...] = field(default=())  # appeared + disappeared, with numbers
    # enough samples pooled, but below the share floor in some process of its side: not claimed
    uneven: tuple[Appearance, ...] = field(default=())
    # one-sided frames between a caller and a callee the other side calls directly: not claimed
    pass_through: tuple[PassThrough, ...] = field(default=())
    # a kernel gone and one new under the same caller: one dispatch change (`with_stack_evidence`)
    dispatches: tuple[DispatchChange, ...] = field(default=())


def diff_profiles(
    baseline: HotSymbols,
    variant: HotSymbols,
    *,
    rule: AppearanceRule = APPEARANCE_RULE,
    top: int = 50,
    baseline_parts: Sequence[HotSymbols] = (),
    variant_parts: Sequence[HotSymbols] = (),
) -> ProfileDiff:
    """Per-symbol self shares side by side, paired by name.

    `appeared`: never on any baseline stack, and on enough variant stacks to say so (`rule`,
    the thresholds above; the other way round for `disappeared`). Functions are compared by their
    identity with clone suffixes folded (`f.cold` on one side and `f` on the other did not
    appear). Symbols seen on one side only, but on too few samples to tell, are `unsettled`,
    with how many more samples would settle them.

    `baseline_parts`/`variant_parts`: the same profiles per independent worker process, where a
    side was recorded in several. A claim then also needs the share floor in each process of its
    side (`even_across_parts`); one that has it pooled but not there is `uneven`, not claimed."""
    deltas = _symbol_deltas(baseline, variant)
    pooled_claims, unsettled = _appearances(baseline, variant, rule)
    claims, uneven = _even_claims(pooled_claims, baseline_parts, variant_parts, rule.min_share)
    appeared = sorted(a.name for a in claims if a.appeared)
    disappeared = sorted(a.name for a in claims if not a.appeared)
    named = {a.name for a in (*claims, *unsettled, *uneven)}
    return ProfileDiff(
        tuple(_shown_deltas(deltas, named, top)),
        tuple(appeared),
        tuple(disappeared),
        tuple(unsettled),
        tuple(claims),
        tuple(uneven),
    )


def _symbol_deltas(baseline: HotSymbols, variant: HotSymbols) -> list[SymbolDelta]:
    """Every symbol of either profile, paired by name, hottest (in either) first."""
    before_by_name = {s.name: s for s in baseline.symbols}
    after_by_name = {s.name: s for s in variant.symbols}
    deltas = []
    for name in before_by_name.keys() | after_by_name.keys():
        before, after = before_by_name.get(name), after_by_name.get(name)
        either = after or before
        deltas.append(
            SymbolDelta(
                name=name,
                object=either.object if either is not None else "",
                baseline_share=before.self_share if before else 0.0,
                variant_share=after.self_share if after else 0.0,
                baseline_children_share=before.children_share if before else 0.0,
                variant_children_share=after.children_share if after else 0.0,
            )
        )
    deltas.sort(key=lambda d: (-max(d.baseline_share, d.variant_share), d.name))
    return deltas


def _even_claims(
    pooled_claims: Sequence[Appearance],
    baseline_parts: Sequence[HotSymbols],
    variant_parts: Sequence[HotSymbols],
    min_share: float,
) -> tuple[list[Appearance], list[Appearance]]:
    """The pooled claims that hold in every process of their side, and the `uneven` rest."""
    claims: list[Appearance] = []
    uneven: list[Appearance] = []
    for entry in pooled_claims:
        parts = _part_counts(entry.name, variant_parts if entry.appeared else baseline_parts)
        entry = replace(entry, parts=parts)
        (claims if even_across_parts(parts, min_share=min_share) else uneven).append(entry)
    return claims, uneven


def _shown_deltas(deltas: Sequence[SymbolDelta], named: set[str], top: int) -> list[SymbolDelta]:
    """The `top` hottest symbols, and every symbol a claim or note names."""
    shown = [d for d in deltas if max(d.baseline_share, d.variant_share) > 0][:top]
    shown_names = {d.name for d in shown}
    return shown + [d for d in deltas if d.name in named and d.name not in shown_names]


def _part_counts(name: str, parts: Sequence[HotSymbols]) -> tuple[tuple[int, int], ...]:
    """(samples with the function on the stack, all samples) in each part; () for fewer than 2."""
    if len(parts) < 2:
        return ()
    counts = []
    for part in parts:
        share = part.share_of(name)
        counts.append((share.children_samples if share else 0, part.total_samples))
    return tuple(counts)


def folded_function_name(name: str) -> str:
    # the instructions lens's notion of one function: demangled, clone suffixes folded
    return normalise_function_name(name)


def _appearances(
    baseline: HotSymbols, variant: HotSymbols, rule: AppearanceRule
) -> tuple[list[Appearance], list[Appearance]]:
    def identities(summary: HotSymbols) -> set[str]:
        return {folded_function_name(s.name) for s in summary.symbols if s.children_samples > 0}

    seen_before, seen_after = identities(baseline), identities(variant)
    claims: list[Appearance] = []
    unsettled: list[Appearance] = []
    sides = ((variant, baseline, seen_before, True), (baseline, variant, seen_after, False))
    for here, there, seen_there, appeared in sides:
        for symbol in here.symbols:
            if symbol.name.startswith(UNKNOWN) or folded_function_name(symbol.name) in seen_there:
                continue
            if symbol.children_share < rule.min_share / 4:
                continue  # noise far below anything worth a note
            more = samples_to_settle(
                symbol.children_samples, here.total_samples, there.total_samples, rule
            )
            entry = Appearance(
                name=symbol.name,
                object=symbol.object,
                appeared=appeared,
                samples=symbol.children_samples,
                total=here.total_samples,
                other_total=there.total_samples,
                more_samples=more or 0,
            )
            if more == 0:
                claims.append(entry)
            elif more is not None:
                unsettled.append(entry)
    return claims, unsettled


# --- what the sampled call stacks found (`profile_evidence.with_stack_evidence`) -------------


@dataclass(frozen=True)
class PassThrough:
    """A function on one side's stacks only, as a frame between a caller and a callee that the
    other side calls directly: an outer function inlined into its caller on one side (3.11
    inlines `pymain_run_python` into `Py_RunMain`), or a hook only one side calls (Dynamo's
    frame evaluator around a compiled function's frame); not new work either way, and the
    stacks cannot tell which."""

    name: str
    appeared: bool
    caller: str | None  # None: the outermost frame
    callee: str
    samples: int

    def message(self) -> str:
        change = "appeared" if self.appeared else "disappeared"
        there = "baseline" if self.appeared else "variant"
        caller = f"`{self.caller}`" if self.caller else "the outermost frame"
        return (
            f"not claimed that `{self.name}` {change}: on its {self.samples} stacks it is only a "
            f"frame between {caller} and `{self.callee}`, which the {there} calls directly "
            f"(the function is inlined into its caller there, or not called): no work of its own"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "change": "appeared" if self.appeared else "disappeared",
            "caller": self.caller,
            "callee": self.callee,
            "samples": self.samples,
        }


@dataclass(frozen=True, kw_only=True)
class DispatchChange:
    """A kernel that ran in the baseline only and another that ran in the variant only, called
    from the same caller on most of their stacks: one call site, another target (a dispatch
    table's slot, a resolver's choice)."""

    old: str
    new: str
    caller: str
    old_object: str
    new_object: str
    old_samples: int  # samples with the kernel on the stack
    new_samples: int
    old_from_caller: int  # of those, called from `caller`
    new_from_caller: int
    baseline_total: int
    variant_total: int
    # "": both callers seen; else which side's stacks end at the kernel (perf could not unwind
    # past it) and the pair rests on the same object and the names instead
    unwound: str = ""
    # the caller is the nearest frame on both sides, reached past frames of one side only
    through_one_sided: bool = False

    def evidence(self) -> tuple[str, ...]:
        def called(side: str, count: int) -> str:
            if self.unwound == side:
                return "its stacks end there (perf could not unwind past it)"
            if self.through_one_sided:
                return f"under {self.caller} (the nearest caller on both sides) on {count}"
            return f"called from {self.caller} on {count}"

        out: tuple[str, ...] = (
            f"perf: {self.old} on {self.old_samples} of {self.baseline_total} sampled stacks "
            f"(baseline), {called('baseline', self.old_from_caller)}; none in the variant",
            f"perf: {self.new} on {self.new_samples} of {self.variant_total} sampled stacks "
            f"(variant), {called('variant', self.new_from_caller)}; none in the baseline",
        )
        if self.unwound:
            out += (
                f"both in {self.old_object}, named alike: one function built for two CPUs "
                f"({self.old} -> {self.new})",
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.old,
            "to": self.new,
            "caller": self.caller,
            "from_object": self.old_object,
            "to_object": self.new_object,
            "evidence": list(self.evidence()),
        }
