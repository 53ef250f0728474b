"""Two profiles compared: per-symbol deltas, and which functions appeared or disappeared,
checked against the sampled call stacks. Pure.

Symbols pair between variants by name only: library paths differ between builds of the same
code. A function is compared by its identity with clone suffixes folded, the instructions lens's
rule, so the lenses claim an appearance alike.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.tools.callgrind import normalise_function_name
from perflab.tools.perf_script import UNKNOWN
from perflab.tools.profile_stacks import HotSymbols, Stack, hot_symbols
from perflab.tools.symbol_names import word_change

# --- differences between two profiles -------------------------------------------------------


@dataclass(frozen=True)
class SymbolDelta:
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
        return (
            f"not claimed that `{self.name}` {change}: it is on {self.samples} of {self.total} "
            f"{self.side} samples and none of {self.other_total} {self.other_side} samples, but "
            f"not in every {self.side} process ({per_part}); a claim needs at least "
            f"{APPEARANCE_MIN_SHARE:.0%} of each process's samples: something one process did "
            "once is not the code"
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


def _identity(name: str) -> str:
    # the instructions lens's notion of one function: demangled, clone suffixes folded
    return normalise_function_name(name)


def _appearances(
    baseline: HotSymbols, variant: HotSymbols, rule: AppearanceRule
) -> tuple[list[Appearance], list[Appearance]]:
    def identities(summary: HotSymbols) -> set[str]:
        return {_identity(s.name) for s in summary.symbols if s.children_samples > 0}

    seen_before, seen_after = identities(baseline), identities(variant)
    claims: list[Appearance] = []
    unsettled: list[Appearance] = []
    sides = ((variant, baseline, seen_before, True), (baseline, variant, seen_after, False))
    for here, there, seen_there, appeared in sides:
        for symbol in here.symbols:
            if symbol.name.startswith(UNKNOWN) or _identity(symbol.name) in seen_there:
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


# -- what the sampled call stacks say about one-sided functions ---------------------------------

# a one-sided function is a frame between two others (not work of its own) when at most this
# share of its samples are its own (leaf) and at least PASS_THROUGH_SHARE of its stacks have a
# caller and callee the other side calls directly
PASS_THROUGH_SELF = 0.01
PASS_THROUGH_SHARE = 0.9
# a dispatch pair: each kernel has at least this share of its side's samples as its own
DISPATCH_MIN_SELF = 0.02


@dataclass(frozen=True)
class PassThrough:
    """A function on one side's stacks only, as a frame between a caller and a callee that the
    other side calls directly: an outer function inlined into its caller on one side (3.11
    inlines `pymain_run_python` into `Py_RunMain`), not new work."""

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
            f"frame between {caller} and `{self.callee}`, which the {there} calls directly (the "
            f"function is inlined into its caller there): no work of its own"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "change": "appeared" if self.appeared else "disappeared",
            "caller": self.caller,
            "callee": self.callee,
            "samples": self.samples,
        }


@dataclass(frozen=True)
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

    def evidence(self) -> tuple[str, ...]:
        def called(side: str, count: int) -> str:
            if self.unwound == side:
                return "its stacks end there (perf could not unwind past it)"
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


def _stack_ids(stack: Stack) -> list[str]:
    return [_identity(symbol) for _, symbol in stack]


def _seen(stacks: Mapping[Stack, int]) -> set[str]:
    """The functions on any stack; frames perf could not name are no function (`[unknown]` in
    one object is not the same code as `[unknown]` in another) and are left out."""
    return {name for stack in stacks for name in _stack_ids(stack) if not name.startswith(UNKNOWN)}


def _neighbours(
    name: str, stacks: Mapping[Stack, int], keep: set[str]
) -> tuple[Counter[tuple[str | None, str]], int, int]:
    """(nearest caller, nearest callee) around `name` on its stacks, counting only frames in
    `keep`; the samples with it on the stack; those where it is the leaf."""
    around: Counter[tuple[str | None, str]] = Counter()
    total = leaf = 0
    for stack, count in stacks.items():
        ids = _stack_ids(stack)
        if name not in ids:
            continue
        total += count
        index = ids.index(name)
        if index == 0:
            leaf += count
            continue
        callee = next((x for x in reversed(ids[:index]) if x in keep), None)
        caller = next((x for x in ids[index + 1 :] if x in keep), None)
        if callee is not None:
            around[(caller, callee)] += count
    return around, total, leaf


def _direct_calls(stacks: Mapping[Stack, int], keep: set[str]) -> set[tuple[str | None, str]]:
    """(caller, callee) pairs adjacent on some stack once frames outside `keep` are skipped
    (the outermost frame has caller None)."""
    pairs: set[tuple[str | None, str]] = set()
    for stack in stacks:
        ids = [x for x in _stack_ids(stack) if x in keep]
        for index, callee in enumerate(ids):
            pairs.add((ids[index + 1] if index + 1 < len(ids) else None, callee))
    return pairs


def _caller_of(name: str, stacks: Mapping[Stack, int], keep: set[str]) -> tuple[str | None, int]:
    """The most common immediate caller of `name` (the frame right above it, named and in
    `keep`: a call through a frame perf could not name is no known call site), and on how many
    samples."""
    callers: Counter[str] = Counter()
    for stack, count in stacks.items():
        ids = _stack_ids(stack)
        if name in ids:
            index = ids.index(name)
            caller = ids[index + 1] if index + 1 < len(ids) else None
            if caller is not None and caller in keep and caller != name:
                callers[caller] += count
    if not callers:
        return None, 0
    return callers.most_common(1)[0]


def _name_hint(old: str, new: str) -> int:
    """How alike two names are, as a tie-break only: the length of their common prefix and
    suffix (`dgemm_kernel_SKYLAKEX`, `dgemm_kernel_HASWELL`)."""
    prefix = len(os.path.commonprefix([old, new]))
    suffix = len(os.path.commonprefix([old[::-1], new[::-1]]))
    return prefix + suffix


def with_stack_evidence(
    diff: ProfileDiff, baseline: Mapping[Stack, int], variant: Mapping[Stack, int]
) -> ProfileDiff:
    """The appearance claims checked against the sampled call stacks: a function that is only a
    frame between a caller and a callee the other side calls directly is no new work
    (`pass_through`, not claimed); a kernel that disappeared and one that appeared, each
    mostly called from one caller that is on both sides, are one dispatch change
    (`dispatches`), not two claims. Names only break ties between several such pairs."""
    if not baseline or not variant:
        return diff
    seen_before, seen_after = _seen(baseline), _seen(variant)
    both = seen_before & seen_after
    direct = {True: _direct_calls(baseline, seen_after), False: _direct_calls(variant, seen_before)}
    passing: list[PassThrough] = []
    kept: list[Appearance] = []
    for entry in diff.claims:
        here = variant if entry.appeared else baseline
        keep = seen_before if entry.appeared else seen_after
        name = _identity(entry.name)
        around, total, leaf = _neighbours(name, here, keep)
        if total and leaf <= PASS_THROUGH_SELF * total and around:
            inside = sum(n for pair, n in around.items() if pair in direct[entry.appeared])
            if inside >= PASS_THROUGH_SHARE * total:
                (caller, callee), _ = around.most_common(1)[0]
                passing.append(PassThrough(entry.name, entry.appeared, caller, callee, total))
                continue
        kept.append(entry)
    dispatches, kept = _dispatch_pairs(kept, baseline, variant, both)
    return replace(
        diff,
        claims=tuple(kept),
        appeared=tuple(sorted(a.name for a in kept if a.appeared)),
        disappeared=tuple(sorted(a.name for a in kept if not a.appeared)),
        pass_through=tuple(passing),
        dispatches=tuple(dispatches),
    )


def _dispatch_pairs(
    claims: Sequence[Appearance],
    baseline: Mapping[Stack, int],
    variant: Mapping[Stack, int],
    both: set[str],
) -> tuple[list[DispatchChange], list[Appearance]]:
    """Claims paired into dispatch changes (first under a shared caller, then across a side
    perf could not unwind), and the claims left."""
    base_hot, var_hot = hot_symbols(baseline), hot_symbols(variant)
    gone = [
        a for a in claims if not a.appeared and _own_share(base_hot, a.name) >= DISPATCH_MIN_SELF
    ]
    new = [a for a in claims if a.appeared and _own_share(var_hot, a.name) >= DISPATCH_MIN_SELF]
    changes = _pairs_under_callers(
        _callers(gone, baseline, both), _callers(new, variant, both), _word_partners(gone, new)
    )
    used = {name for change in changes for name in (change.old, change.new)}
    rest_old = [a for a in gone if a.name not in used]
    rest_new = [a for a in new if a.name not in used]
    changes += _pairs_past_unwinding(rest_old, rest_new, baseline, variant, both)
    used = {name for change in changes for name in (change.old, change.new)}
    return changes, [a for a in claims if a.name not in used]


def _own_share(summary: HotSymbols, name: str) -> float:
    share = summary.share_of(name)
    return share.self_share if share else 0.0


def _callers(
    entries: list[Appearance], stacks: Mapping[Stack, int], both: set[str]
) -> dict[str, list[tuple[Appearance, int]]]:
    """Caller -> the entries it calls on at least half of their stacks, with how often."""
    out: dict[str, list[tuple[Appearance, int]]] = {}
    for entry in entries:
        caller, count = _caller_of(_identity(entry.name), stacks, both)
        if caller is not None and count >= entry.samples / 2:
            out.setdefault(caller, []).append((entry, count))
    return out


def _word_partners(gone: list[Appearance], new: list[Appearance]) -> dict[str, str]:
    # a function whose name is one word from a candidate of the other side (dgemm_kernel_SKYLAKEX,
    # dgemm_kernel_HASWELL) is never paired with another one under the same caller: its
    # partner's stacks may end before the caller (`_pairs_past_unwinding`)
    return {
        a.name: b.name
        for a in (*gone, *new)
        for b in (new if not a.appeared else gone)
        if word_change(a.name, b.name) is not None
    }


def _pairs_under_callers(
    by_old: dict[str, list[tuple[Appearance, int]]],
    by_new: dict[str, list[tuple[Appearance, int]]],
    partner: dict[str, str],
) -> list[DispatchChange]:
    """Under each caller of both sides, its gone and new callees paired, best named first."""

    def allowed(old: Appearance, new_entry: Appearance) -> bool:
        want_old, want_new = partner.get(old.name), partner.get(new_entry.name)
        return want_old in (None, new_entry.name) and want_new in (None, old.name)

    changes: list[DispatchChange] = []
    for caller in sorted(by_old.keys() & by_new.keys()):
        olds, news = list(by_old[caller]), list(by_new[caller])
        while olds and news:
            pairs = [(o, n) for o in olds for n in news if allowed(o[0], n[0])]
            if not pairs:
                break
            (old, old_n), (new_entry, new_n) = max(
                pairs,
                key=lambda pair: (_name_hint(pair[0][0].name, pair[1][0].name), pair[0][1]),
            )
            olds.remove((old, old_n))
            news.remove((new_entry, new_n))
            changes.append(
                DispatchChange(
                    old.name,
                    new_entry.name,
                    caller,
                    old.object,
                    new_entry.object,
                    old.samples,
                    new_entry.samples,
                    old_n,
                    new_n,
                    old.total,
                    new_entry.total,
                )
            )
    return changes


def _pairs_past_unwinding(
    rest_old: list[Appearance],
    rest_new: list[Appearance],
    baseline: Mapping[Stack, int],
    variant: Mapping[Stack, int],
    both: set[str],
) -> list[DispatchChange]:
    """A kernel whose stacks end at it (no unwind information past it: hand-written assembly)
    and one called from a known caller: the same object and names one word apart pair them."""
    changes: list[DispatchChange] = []
    used: set[str] = set()
    for old in rest_old:
        old_caller, old_n = _caller_of(_identity(old.name), baseline, both)
        for new_entry in rest_new:
            if new_entry.name in used or new_entry.object != old.object:
                continue
            if word_change(old.name, new_entry.name) is None:
                continue
            new_caller, new_n = _caller_of(_identity(new_entry.name), variant, both)
            known_old = old_caller is not None and old_n >= old.samples / 2
            known_new = new_caller is not None and new_n >= new_entry.samples / 2
            if known_old == known_new:
                continue  # both known (different callers) or neither: no evidence of one site
            site = old_caller if known_old else new_caller
            assert site is not None
            used |= {old.name, new_entry.name}
            changes.append(
                DispatchChange(
                    old.name,
                    new_entry.name,
                    site,
                    old.object,
                    new_entry.object,
                    old.samples,
                    new_entry.samples,
                    old_n if known_old else 0,
                    new_n if known_new else 0,
                    old.total,
                    new_entry.total,
                    unwound="variant" if known_old else "baseline",
                )
            )
            break
    return changes
