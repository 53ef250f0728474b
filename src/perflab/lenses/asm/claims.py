"""The claims about one row of the asm comparison, each only from the evidence named. Pure.

- code_changed / vector_width_changed: the executed code of one function differs (disassembly);
  never between byte-identical objects (same build-id or content hash);
- dispatch_changed: another member of the family ran (perf samples of both members);
- callee_changed: a call site calls another function (disassembly of both sides), and perf
  sampled the callee it calls in at least one side (a claim is about the code that ran);
- inlined / outlined: a callee's code is inlined into the caller in one variant (DWARF inlined
  subroutine records) and called out of line by it in the other (disassembly);
- appeared / disappeared: sampled in one variant only, with enough samples that zero on the
  other side is not chance, what the symbol table says about the other side, and never where
  the other side's executed code calls it directly (then it ran there, its samples in its
  caller).

Rows that ran in one variant only but play one role are paired first (`pairings`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.lenses.asm.code_diff import FunctionChange, RowTag
from perflab.lenses.asm.identity import callee_stem, family, member
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.rows import Row, Side, VariantCode, samples_text
from perflab.lenses.asm.summaries import INDIRECT_CALL, call_targets
from perflab.records.diagnosis import Claim, Diagnosis
from perflab.tool_output.object_names import object_basename
from perflab.tool_output.profile_diff import (
    APPEARANCE_MAX_CHANCE,
    APPEARANCE_MIN_SAMPLES,
    APPEARANCE_MIN_SHARE,
)


def _same_object(baseline: VariantCode, variant: VariantCode, b: Side, v: Side) -> bool:
    if b.primary is None or v.primary is None:
        return False
    left = baseline.identities.get(b.primary.object_path)
    right = variant.identities.get(v.primary.object_path)
    return left is not None and left == right


def _inlined_into(listings: Sequence[FunctionListing], callee: str) -> list[str]:
    """DWARF evidence that `callee`'s code is inlined into one of `listings`: 'X inlined into Y
    at file:line' sentences (empty: no such record)."""
    wanted = family(plain_name(callee))
    found: dict[str, None] = {}
    for listing in listings:
        for chain in (listing.inline_frames or {}).values():
            for inner, outer in zip(chain, chain[1:], strict=False):
                if family(plain_name(inner.function)) == wanted:
                    found.setdefault(
                        f"DWARF: {plain_name(inner.function)} inlined into "
                        f"{plain_name(outer.function)} at {outer.location()}",
                        None,
                    )
    return list(found)[:2]


def _called_where_executed(listings: Sequence[FunctionListing], callee: str) -> list[str]:
    """objdump evidence that sampled code calls `callee` directly at a place that ran: a call
    site in the function's hot loop, or with samples on the call or the instruction after it
    (where the return lands). Empty: no such call site (indirect calls cannot be told)."""
    wanted = family(plain_name(callee))
    found: list[str] = []
    for listing in listings:
        if listing.cost <= 0:
            continue
        lines = listing.lines
        for index, line in enumerate(lines):
            targets = [t for t in call_targets((line,)) if t != INDIRECT_CALL]
            if not targets or family(plain_name(targets[0])) != wanted:
                continue
            after = lines[index + 1].cost if index + 1 < len(lines) else 0.0
            if line.in_hot_loop or line.cost > 0 or after > 0:
                where = "in its hot loop" if line.in_hot_loop else "where samples landed"
                found.append(
                    f"objdump: {listing.name} calls {targets[0]} at "
                    f"{line.instruction.address:#x}, {where}"
                )
                break
    return found[:2]


def _call_samples(listings: Sequence[FunctionListing], callee: str) -> float:
    """Samples on the calls to `callee` in `listings` and on the instruction after each (where
    its return lands): how often those call sites ran, as perf saw it."""
    wanted = family(plain_name(callee))
    total = 0.0
    for listing in listings:
        lines = listing.lines
        for index, line in enumerate(lines):
            targets = [t for t in call_targets((line,)) if t != INDIRECT_CALL]
            if targets and family(plain_name(targets[0])) == wanted:
                total += line.cost + (lines[index + 1].cost if index + 1 < len(lines) else 0.0)
    return total


def _inlined_samples(listings: Sequence[FunctionListing], callee: str) -> float:
    """Samples on the addresses whose DWARF inline chain holds `callee` (its inlined copies)."""
    wanted = family(plain_name(callee))
    total = 0.0
    for listing in listings:
        if not listing.inline_frames:
            continue
        cost_at = {line.instruction.address: line.cost for line in listing.lines}
        for address, chain in listing.inline_frames.items():
            if any(family(plain_name(frame.function)) == wanted for frame in chain[:-1]):
                total += cost_at.get(address, 0.0)
    return total


def _touched(
    code: VariantCode, listings: Sequence[FunctionListing], callee: str, *, inlined: bool
) -> float:
    """The samples of one side that a change of the call to `callee` touches: the inlined copy
    (`inlined`), or the call sites and the out-of-line callee's own samples."""
    if inlined:
        return _inlined_samples(listings, callee)
    return _call_samples(listings, callee) + float(
        code.family_samples.get(family(plain_name(callee)), 0.0)
    )


def _callee_samples(code: VariantCode, callee: str) -> float:
    """perf's samples on a callee's own code: its family's, and its PLT stub's. A call's claim
    is about its callee; samples on the call site alone show the call ran, not the callee."""
    wanted = family(plain_name(callee))
    listed = [listing for listing in code.listings if family(listing.name) == wanted]
    stub = float(code.family_samples.get(f"{wanted}@plt", 0.0))
    return code.samples_of(wanted, listed) + stub


def _ran_detail(
    before: float, after: float, baseline: VariantCode, variant: VariantCode
) -> dict[str, Any]:
    return {
        "ran_samples": {"baseline": before, "variant": after},
        "ran_share": {"baseline": baseline.share(before), "variant": variant.share(after)},
    }


def plain_name(name: str) -> str:
    """A symboliser's name without its argument list, for comparing with symbol names."""
    name = name.split("@", 1)[0]
    depth = 0
    for i, char in enumerate(name):
        if char == "(" and depth == 0 and not name[:i].endswith("operator"):
            return name[:i]
        depth += {"<": 1, ">": -1}.get(char, 0)
    return name


def _has_debug(listings: Sequence[FunctionListing]) -> bool:
    return any(listing.inline_frames is not None for listing in listings)


def _callee_pairs(
    change: FunctionChange, removed: set[str], added: set[str]
) -> list[tuple[str, str]]:
    """Calls that changed target: a changed diff line `call X` -> `call Y`, then callees of one
    stem (`Sleef_expf8_u10` -> `Sleef_expf16_u10`), then a single removed and added call."""
    pairs: list[tuple[str, str]] = []
    free_r, free_a = set(removed), set(added)

    def take(x: str, y: str) -> None:
        pairs.append((x, y))
        free_r.discard(x)
        free_a.discard(y)

    for row in change.rows:
        if row.tag is RowTag.CHANGED and row.left is not None and row.right is not None:
            x, y = call_target(row.left.text), call_target(row.right.text)
            if x in free_r and y in free_a:
                take(x, y)
    for x in sorted(free_r):
        for y in sorted(free_a):
            if x in free_r and y in free_a and callee_stem(x) == callee_stem(y):
                take(x, y)
    if len(free_r) == 1 and len(free_a) == 1:
        take(next(iter(free_r)), next(iter(free_a)))
    return pairs


def call_target(text: str) -> str:
    """The callee of a `call X` line, or of a tail call `jmp X` out of the function."""
    mnemonic, _, operand = text.partition(" ")
    if mnemonic not in ("call", "jmp") or operand.startswith(".L"):
        return ""
    if operand.startswith("qword ptr [rip + ") and operand.endswith("]"):
        return operand[len("qword ptr [rip + ") : -1]
    return operand


@dataclass
class _Findings:
    """One row's claims as they are found: on code that ran, on code no sample landed on (listed,
    not claimed), and the notes on claims that cannot be made."""

    diagnoses: list[Diagnosis] = field(default_factory=list)
    not_run: list[Diagnosis] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, claim: Diagnosis, ran: bool) -> None:
        (self.diagnoses if ran else self.not_run).append(claim)


def row_claims(row: Row, baseline: VariantCode, variant: VariantCode, explained: set[str]) -> Row:
    """The claims about one function that ran in both variants."""
    b, v = row.baseline, row.variant
    if not (b.ran and v.ran and b.primary is not None and v.primary is not None):
        return replace(row, diagnoses=(), notes=(), not_run=())
    same_name_same_object = b.primary.symbol == v.primary.symbol and _same_object(
        baseline, variant, b, v
    )
    if same_name_same_object and (
        b.primary.address == v.primary.address or not _each_ran_its_own_copy(b, v)
    ):
        return row  # byte-identical code: nothing can have changed in it
    samples = int(min(b.samples, v.samples))
    found = _Findings()
    # one object defining the name twice (numpy builds each CPU target's object with the same
    # static helpers) and each variant running another copy is a dispatch, not a rebuild
    other_copy = same_name_same_object
    dispatched = other_copy or member(b.primary.name) != member(v.primary.name)
    if dispatched:
        evidence = _copy_evidence(b, v) if other_copy else ran_evidence(b, v)
        found.diagnoses.append(dispatch_claim(row.name, b.primary, v.primary, evidence, samples))
    _call_claims(row, baseline, variant, samples, found, explained)
    # (a change where no sample landed explains the code's change too, unclaimed)
    explained_here = any(
        d.claim in (Claim.INLINED, Claim.OUTLINED, Claim.CALLEE_CHANGED)
        for d in (*found.diagnoses, *found.not_run)
    )
    # one cause, one claim: code that changed only because a call was inlined, outlined
    # or retargeted is said by that claim, not again as a code change (nor as the vector width the
    # inlined code brought)
    if dispatched or not explained_here:
        found.diagnoses += vector_width_change(row.name, b.primary, v.primary, samples)
    if not dispatched and not row.change.identical and not explained_here:
        found.diagnoses.append(_code_changed(row, baseline, variant, samples))
    return Row(
        name=row.name,
        baseline=b,
        variant=v,
        change=row.change,
        diagnoses=tuple(found.diagnoses),
        notes=tuple(found.notes),
        not_run=tuple(found.not_run),
    )


def _call_claims(
    row: Row,
    baseline: VariantCode,
    variant: VariantCode,
    samples: int,
    found: _Findings,
    explained: set[str],
) -> None:
    """The calls one side makes and the other does not: inlined, outlined, or retargeted."""
    b, v = row.baseline, row.variant
    assert b.primary is not None and v.primary is not None
    removed = set(b.calls) - set(v.calls) - {INDIRECT_CALL}
    added = set(v.calls) - set(b.calls) - {INDIRECT_CALL}
    b_code, v_code = [b.primary, *b.parts], [v.primary, *v.parts]
    # a call gone because the variant inlined the callee, or new because it outlined it
    for claim, calls, into, where, in_variant in (
        (Claim.INLINED, removed, v_code, "variant", True),
        (Claim.OUTLINED, added, b_code, "baseline", False),
    ):
        for callee in sorted(calls):
            evidence = _inlined_into(into, callee)
            if not evidence:
                continue
            ran = (
                _touched(baseline, b_code, callee, inlined=not in_variant),
                _touched(variant, v_code, callee, inlined=in_variant),
            )
            diagnosis = _inline_claim(claim, callee, row, evidence, where, samples)
            detail = {**diagnosis.detail, **_ran_detail(*ran, baseline, variant)}
            found.add(replace(diagnosis, detail=detail), sum(ran) > 0)
            calls.discard(callee)
            explained.add(family(callee))
    for x, y in _callee_pairs(row.change, removed, added):
        found.add(*_retargeted(row, x, y, (baseline, variant), samples))
        explained.update({family(x), family(y)})
    if (removed or added) and not (_has_debug([b.primary]) and _has_debug([v.primary])):
        found.notes.append(
            f"calls changed in {row.name}; whether they were inlined or outlined cannot "
            f"be told: no debug info for {object_basename(b.primary.object_path)}: build with -g"
        )


def _retargeted(
    row: Row, x: str, y: str, code: tuple[VariantCode, VariantCode], samples: int
) -> tuple[Diagnosis, bool]:
    """The callee_changed claim of a call site that calls `x` in the baseline and `y` in the
    variant, and whether it is about code that ran: the claim is about the callees, so one of
    them must have samples, not only the call site."""
    b, v = row.baseline, row.variant
    assert b.primary is not None and v.primary is not None
    baseline, variant = code
    ran = (
        _touched(baseline, [b.primary, *b.parts], x, inlined=False),
        _touched(variant, [v.primary, *v.parts], y, inlined=False),
    )
    sites = (
        f"objdump: {b.primary.name} calls {x} (baseline)",
        f"objdump: {v.primary.name} calls {y} instead (variant)",
    )
    detail = {"from": x, "to": y, **_ran_detail(*ran, baseline, variant)}
    claim = Diagnosis(Claim.CALLEE_CHANGED, row.name, sites, samples, detail)
    return claim, _callee_samples(baseline, x) + _callee_samples(variant, y) > 0


def _code_changed(row: Row, baseline: VariantCode, variant: VariantCode, samples: int) -> Diagnosis:
    b, v = row.baseline, row.variant
    differing = sum(r.tag is not RowTag.SAME for r in row.change.rows)
    return Diagnosis(
        Claim.CODE_CHANGED,
        row.name,
        (
            f"disassembly: {differing} of {len(row.change.rows)} normalised "
            f"instructions differ; {b.size_bytes} -> {v.size_bytes} bytes",
            f"objects differ: {_identity_text(baseline, b)} vs {_identity_text(variant, v)}",
        ),
        samples,
    )


def ran_evidence(b: Side, v: Side, only: str = "") -> tuple[str, str]:
    """perf's evidence that each side ran its own function (`only`: and not the other's)."""
    assert b.primary is not None and v.primary is not None
    return (
        f"perf: ran {b.primary.name} in the baseline{only} ({samples_text(b.samples, b.total)})",
        f"perf: ran {v.primary.name} in the variant{only} ({samples_text(v.samples, v.total)})",
    )


def _each_ran_its_own_copy(b: Side, v: Side) -> bool:
    """Whether neither side ran (with samples) the copy of the name the other side ran most:
    where both ran both, the hottest of each is not what the variants changed."""
    assert b.primary is not None and v.primary is not None

    def sampled(side: Side, symbol: str) -> set[int]:
        listings = (side.primary, *side.parts)
        return {x.address for x in listings if x is not None and x.symbol == symbol and x.cost}

    symbol = b.primary.symbol
    return v.primary.address not in sampled(b, symbol) and b.primary.address not in sampled(
        v, symbol
    )


def _copy_evidence(b: Side, v: Side) -> tuple[str, str]:
    """perf's and the symbol table's evidence that each variant ran another of one object's
    functions of one name."""
    assert b.primary is not None and v.primary is not None
    where = object_basename(b.primary.object_path)
    return (
        f"symbol table: {where} defines {b.primary.symbol} at {b.primary.address:#x} and at "
        f"{v.primary.address:#x}",
        f"perf: the baseline ran the one at {b.primary.address:#x} "
        f"({samples_text(b.samples, b.total)}), the variant the one at "
        f"{v.primary.address:#x} ({samples_text(v.samples, v.total)})",
    )


def dispatch_claim(
    name: str,
    baseline: FunctionListing,
    variant: FunctionListing,
    evidence: tuple[str, ...],
    samples: int,
) -> Diagnosis:
    detail = {"from": baseline.name, "to": variant.name}
    return Diagnosis(Claim.DISPATCH_CHANGED, name, evidence, samples, detail)


def vector_width_change(
    name: str, baseline: FunctionListing, variant: FunctionListing, samples: int
) -> list[Diagnosis]:
    """A dispatch pair's widest vector registers, claimed where they differ."""
    old_bits, new_bits = baseline.vector_width_bits, variant.vector_width_bits
    if old_bits == new_bits:
        return []
    evidence = (
        f"disassembly: widest vector register {old_bits or 'none'} bits in {baseline.symbol} "
        f"(baseline), {new_bits or 'none'} in {variant.symbol} (variant)",
    )
    return [
        Diagnosis(
            Claim.VECTOR_WIDTH_CHANGED, name, evidence, samples, {"from": old_bits, "to": new_bits}
        )
    ]


def _identity_text(code: VariantCode, side: Side) -> str:
    assert side.primary is not None
    return str(code.identities.get(side.primary.object_path) or "identity unknown")


def _inline_claim(
    claim: Claim, callee: str, row: Row, evidence: list[str], where: str, samples: int
) -> Diagnosis:
    other = "baseline" if where == "variant" else "variant"
    return Diagnosis(
        claim,
        family(callee),
        (*[f"{e} ({where})" for e in evidence], f"objdump: {row.name} calls {callee} ({other})"),
        samples,
        {"caller": row.name},
    )


def _absence_settled(present_samples: float, present_share: float, absent_total: float) -> bool:
    """Whether none of `absent_total` samples on one side, where the other had `present_samples` at
    `present_share`, says the function ran on one side only: the profile lens's rule
    (tools.profile_diff), so the two lenses claim an appearance alike. A function near the ran floor
    comes and goes between runs of identical code (sampling aliasing with a periodic loop), so 1%
    and an expected 5 samples were not enough."""
    return (
        present_samples >= APPEARANCE_MIN_SAMPLES
        and present_share >= APPEARANCE_MIN_SHARE
        and (1 - present_share) ** absent_total <= APPEARANCE_MAX_CHANCE
    )


def _object_unchanged(present: Side, present_code: VariantCode, absent_code: VariantCode) -> str:
    """The present function's object by name when the other variant mapped a byte-identical
    copy of it (the same identity), else ""."""
    if present.primary is None:
        return ""
    path = present.primary.object_path
    mine = present_code.identities.get(path)
    name = object_basename(path)
    same = any(
        identity == mine and object_basename(other) == name
        for other, identity in absent_code.identities.items()
    )
    return name if mine is not None and same else ""


def _why_unsettled(present: Side, absent: Side) -> str:
    seen = f"{int(present.samples)} samples ({present.share:.1%}) where it ran"
    if present.samples < APPEARANCE_MIN_SAMPLES or present.share < APPEARANCE_MIN_SHARE:
        return (
            f"{seen}, under the {APPEARANCE_MIN_SAMPLES} samples and "
            f"{APPEARANCE_MIN_SHARE:.0%} an appearance needs: it comes and goes between runs"
        )
    needed = math.log(APPEARANCE_MAX_CHANCE) / math.log(1 - present.share)
    return (
        f"{seen}, none of {int(absent.total)} in the other variant; about "
        f"{int(needed - absent.total) + 1} more samples there would settle it"
    )


def _absence_evidence(present: Side, absent: Side, label_p: str, label_a: str) -> list[str]:
    """What says a function ran on one side only: perf's samples, and why the other lacks it."""
    return [
        f"perf: {samples_text(present.samples, present.total)} in the {label_p}; "
        f"0 of {int(absent.total)} in the {label_a}",
        f"{label_a}: {absent.why_not}",
    ]


def one_sided(row: Row, baseline: VariantCode, variant: VariantCode, explained: set[str]) -> Row:
    """The appeared or disappeared claim of a function that ran in one variant only, or the note
    saying why none is made."""
    b, v = row.baseline, row.variant
    if b.ran == v.ran or row.name in explained:
        return row
    present, absent = (b, v) if b.ran else (v, b)
    absent_code = variant if b.ran else baseline
    claim = Claim.DISAPPEARED if b.ran else Claim.APPEARED
    notes = list(row.notes)
    if absent.samples > 0:
        return row
    if not _absence_settled(present.samples, present.share, absent.total):
        notes.append(f"no {claim} claim for {row.name}: {_why_unsettled(present, absent)}")
        return replace(row, notes=tuple(notes))
    label_p, label_a = ("baseline", "variant") if b.ran else ("variant", "baseline")
    evidence = _absence_evidence(present, absent, label_p, label_a)
    # the callee's code may now run inlined in a caller: DWARF says so, or nothing is claimed
    inline = _inlined_into(absent_code.listings, row.name)
    called = _called_where_executed(absent_code.listings, row.name)
    if inline:
        claim = Claim.INLINED if b.ran else Claim.OUTLINED
        evidence = [*[f"{e} ({label_a})" for e in inline], *evidence]
    elif called:
        # the other side's executed code calls it: it ran there too, and its samples went to
        # the caller (a few-instruction function under cpu-clock's skid), so its absence on
        # that side says nothing (tests/corpus has the case)
        notes.append(
            f"no {claim} claim for {row.name}: it is sampled in the {label_p} only, but the "
            f"{label_a}'s executed code calls it ({'; '.join(called)}), so it ran there too "
            "and its samples were counted in its caller"
        )
        return replace(row, notes=tuple(notes))
    elif unchanged := _object_unchanged(present, variant if b.ran else baseline, absent_code):
        # inlining is decided when an object is built: in one built alike it did not change
        notes.append(
            f"{row.name} is not inlined in one variant only: {unchanged} is byte-identical in "
            f"both, so the {label_a} took another path through it (a dispatch, a branch)"
        )
    elif not _has_debug(absent_code.listings) and absent_code.listings:
        notes.append(
            f"whether {row.name} is now inlined cannot be told: no debug info in the "
            f"{label_a}'s hot code: build with -g"
        )
    diagnosis = Diagnosis(claim, row.name, tuple(evidence), int(present.samples))
    return replace(row, diagnoses=(*row.diagnoses, diagnosis), notes=tuple(notes))
