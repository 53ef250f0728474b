"""What the sampled call stacks say about a function one profile has and the other lacks. They can
say two things only: a frame between a caller and a callee the other side calls directly (no work of
its own), or one of a pair of kernels under one caller (one dispatch change, not two claims).
Pure."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from perflab.tool_output.perf_script import UNKNOWN
from perflab.tool_output.profile_diff import (
    Appearance,
    DispatchChange,
    PassThrough,
    ProfileDiff,
    folded_function_name,
)
from perflab.tool_output.profile_stacks import HotSymbols, Stack, hot_symbols
from perflab.tool_output.symbol_names import word_change

# a one-sided function is a frame between two others (not work of its own) when at most this
# share of its samples are its own (leaf) and at least PASS_THROUGH_SHARE of its stacks have a
# caller and callee the other side calls directly
PASS_THROUGH_SELF = 0.01
PASS_THROUGH_SHARE = 0.9
# a dispatch pair: each kernel has at least this share of its side's samples as its own
DISPATCH_MIN_SELF = 0.02


def _stack_ids(stack: Stack) -> list[str]:
    return [folded_function_name(symbol) for _, symbol in stack]


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


def _nearest_shared_caller(
    name: str, stacks: Mapping[Stack, int], keep: set[str]
) -> tuple[str | None, int]:
    """The most common nearest frame above `name` that is in `keep` (on both sides' stacks),
    past frames of one side only (torch.compile's `kernel_py` above its kernel), and on how
    many samples."""
    callers: Counter[str] = Counter()
    for stack, count in stacks.items():
        ids = _stack_ids(stack)
        if name in ids:
            caller = None
            for frame in ids[ids.index(name) + 1 :]:
                if frame.startswith(UNKNOWN):
                    break  # a frame perf could not name: no known path to a caller
                if frame in keep and frame != name:
                    caller = frame
                    break
            if caller is not None:
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


def _alike(old: str, new: str) -> bool:
    """Names of one template or function instantiated twice (`sort_n_vec<zmm_vector...>`,
    `sort_n_vec<avx2_vector...>`), or one word apart (`dgemm_kernel_SKYLAKEX`, `_HASWELL`)."""
    stem_old, stem_new = (re.split(r"[<(]", name, maxsplit=1)[0] for name in (old, new))
    if stem_old and stem_old == stem_new:
        return True
    changed = word_change(old, new)
    return changed is not None and changed[0] != old  # one word of several, not the whole name


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
        name = folded_function_name(entry.name)
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
    rest_old = [a for a in gone if a.name not in used]
    rest_new = [a for a in new if a.name not in used]
    farther = _pairs_under_callers(
        _callers(rest_old, baseline, both, nearest=True),
        _callers(rest_new, variant, both, nearest=True),
        _word_partners(rest_old, rest_new),
        alike_among_several=True,
    )
    changes += [replace(change, through_one_sided=True) for change in farther]
    used = {name for change in changes for name in (change.old, change.new)}
    return changes, [a for a in claims if a.name not in used]


def _own_share(summary: HotSymbols, name: str) -> float:
    share = summary.share_of(name)
    return share.self_share if share else 0.0


def _callers(
    entries: list[Appearance], stacks: Mapping[Stack, int], both: set[str], *, nearest: bool = False
) -> dict[str, list[tuple[Appearance, int]]]:
    """Caller -> the entries it calls on at least half of their stacks, with how often; with
    `nearest`, the caller is the nearest frame on both sides past one-sided frames."""
    find = _nearest_shared_caller if nearest else _caller_of
    out: dict[str, list[tuple[Appearance, int]]] = {}
    for entry in entries:
        caller, count = find(folded_function_name(entry.name), stacks, both)
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
    *,
    alike_among_several: bool = False,
) -> list[DispatchChange]:
    """Under each caller of both sides, its gone and new callees paired, best named first; with
    `alike_among_several`, a caller with several candidates on a side pairs only names alike
    (`_alike`): one shared caller far up the stack is weak evidence on its own."""

    def allowed(old: Appearance, new_entry: Appearance, several: bool) -> bool:
        want_old, want_new = partner.get(old.name), partner.get(new_entry.name)
        if several and not _alike(old.name, new_entry.name):
            return False
        return want_old in (None, new_entry.name) and want_new in (None, old.name)

    changes: list[DispatchChange] = []
    for caller in sorted(by_old.keys() & by_new.keys()):
        olds, news = list(by_old[caller]), list(by_new[caller])
        several = alike_among_several and max(len(olds), len(news)) > 1
        while olds and news:
            pairs = [(o, n) for o in olds for n in news if allowed(o[0], n[0], several)]
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
                    old=old.name,
                    new=new_entry.name,
                    caller=caller,
                    old_object=old.object,
                    new_object=new_entry.object,
                    old_samples=old.samples,
                    new_samples=new_entry.samples,
                    old_from_caller=old_n,
                    new_from_caller=new_n,
                    baseline_total=old.total,
                    variant_total=new_entry.total,
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
        old_caller, old_n = _caller_of(folded_function_name(old.name), baseline, both)
        for new_entry in rest_new:
            if new_entry.name in used or new_entry.object != old.object:
                continue
            if word_change(old.name, new_entry.name) is None:
                continue
            new_caller, new_n = _caller_of(folded_function_name(new_entry.name), variant, both)
            known_old = old_caller is not None and old_n >= old.samples / 2
            known_new = new_caller is not None and new_n >= new_entry.samples / 2
            if known_old == known_new:
                continue  # both known (different callers) or neither: no evidence of one site
            site = old_caller if known_old else new_caller
            assert site is not None
            used |= {old.name, new_entry.name}
            changes.append(
                DispatchChange(
                    old=old.name,
                    new=new_entry.name,
                    caller=site,
                    old_object=old.object,
                    new_object=new_entry.object,
                    old_samples=old.samples,
                    new_samples=new_entry.samples,
                    old_from_caller=old_n if known_old else 0,
                    new_from_caller=new_n if known_new else 0,
                    baseline_total=old.total,
                    variant_total=new_entry.total,
                    unwound="variant" if known_old else "baseline",
                )
            )
            break
    return changes
