"""From two variants' stored listings to rows a user can trust and claims with their evidence.

Pure: stored records in, rows and `Diagnosis` records out.

A row is one function identity (`rows`); the claims about it come from `claims`, and rows that
ran in one variant only are paired where they play one role (`pairings`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from perflab.lenses.asm.claims import call_target, one_sided, row_claims
from perflab.lenses.asm.code_diff import compare_functions
from perflab.lenses.asm.disassembly import AsmLine
from perflab.lenses.asm.identity import identity
from perflab.lenses.asm.pairings import (
    cold_callers,
    cpu_copies,
    isa_changes,
    pair_by_call_site,
    variant_changes,
    vector_instances,
)
from perflab.lenses.asm.rows import Row, VariantCode, group_families, side_of
from perflab.lenses.asm.summaries import INDIRECT_CALL
from perflab.tool_output.symbol_names import NamePairing, pair_names, readable, spelling_stem


def explain(
    baseline: VariantCode, variant: VariantCode, selectors: Sequence[str] = ()
) -> list[Row]:
    """Rows for every function either variant ran (or named), hottest first, with claims.
    The variant's names are first respelled as the baseline spells the same function
    (`pair_names`: a Rust hash, a crate disambiguator), so one function is one row.
    `selectors`: what differs between the variants in choosing a library's compiled copy
    (`selector_changes`), the evidence a CPU-copy dispatch pair needs."""
    pairing = pair_names(_names(baseline), _names(variant))
    variant = _respelled(variant, pairing)
    left, right = group_families(baseline), group_families(variant)
    names = list(dict.fromkeys([*left, *right]))
    rows = []
    for name in names:
        b = side_of(baseline, name, left.get(name, []))
        v = side_of(variant, name, right.get(name, []))
        change = compare_functions(
            identity(name),
            b.primary if b.ran or baseline.named else None,
            v.primary if v.ran or variant.named else None,
        )
        rows.append(Row(name=name, baseline=b, variant=v, change=change))
    rows.sort(key=lambda row: -row.hotness)
    claimed = _claims(rows, baseline, variant, tuple(selectors))
    return [_spelling_said(row, pairing) for row in claimed]


def _claims(
    rows: list[Row], baseline: VariantCode, variant: VariantCode, selectors: tuple[str, ...]
) -> list[Row]:
    """Each row's own claims, then the rows that ran in one variant only paired where they play
    one role, then what is left of those claimed as appeared or disappeared."""
    explained: set[str] = set()  # families a callee/inlining claim already accounts for
    out = [row_claims(row, baseline, variant, explained) for row in rows]
    out = cold_callers(out, baseline, variant, explained)
    out = cpu_copies(out, baseline, variant, explained, selectors)
    out = vector_instances(out, baseline, variant, explained, selectors)
    out = isa_changes(out, baseline, variant, explained)
    out = variant_changes(out, baseline, variant, explained)
    rows = [one_sided(row, baseline, variant, explained) for row in out]
    return pair_by_call_site(rows)


def _spelling_said(row: Row, pairing: NamePairing) -> Row:
    """A row of two spellings says why they were taken for one function; a row whose name
    other functions share in spelling only says why it was not paired; its claims name the
    function as people read it (`readable`: no Rust hash, no legacy escapes)."""
    pair = pairing.pair_of(identity(row.name))
    stem = spelling_stem(row.name)
    unpaired = tuple(u.reason for u in pairing.unpaired if u.stem == stem)
    diagnoses = tuple(replace(d, function=readable(d.function)) for d in row.diagnoses)
    not_run = tuple(replace(d, function=readable(d.function)) for d in row.not_run)
    return replace(
        row,
        diagnoses=diagnoses,
        not_run=not_run,
        paired_by=row.paired_by or (pair.reason if pair else ""),
        notes=(*row.notes, *unpaired),
    )


def _names(code: VariantCode) -> set[str]:
    """The function names of a variant's own code: its listings, their callees, the sampled
    families. Not what its symbol table was asked about (`defined`, `searched`): those are the
    other variant's names, and would make every paired name look like two of one build."""
    names = {listing.name for listing in code.listings}
    names.update(callee for listing in code.listings for callee in listing.calls)
    names.update(code.family_samples, code.call_sites)
    names.update(callee for callees in code.call_sites.values() for callee in callees)
    return {name.split("@", 1)[0] for name in names if name != INDIRECT_CALL}


def _respelled(code: VariantCode, pairing: NamePairing) -> VariantCode:
    """The variant's artifact with each paired name spelled as the baseline spells it: its
    listings, their call operands, and every map keyed by name."""
    if not pairing.pairs:
        return code

    def name(text: str) -> str:
        base, at, rest = text.partition("@")
        return pairing.variant_name(base) + at + rest

    def line(item: AsmLine) -> AsmLine:
        mnemonic, space, operand = item.text.partition(" ")
        target = call_target(item.text)
        if not target or name(target) == target:
            return item
        return replace(item, text=mnemonic + space + operand.replace(target, name(target)))

    def keyed(mapping: Mapping[str, Any]) -> dict[str, Any]:
        return {name(key): value for key, value in mapping.items()}

    return replace(
        code,
        listings=tuple(
            replace(
                listing,
                name=name(listing.name),
                lines=tuple(line(item) for item in listing.lines),
            )
            for listing in code.listings
        ),
        family_samples=keyed(code.family_samples),
        defined=keyed(code.defined),
        searched=keyed(code.searched),
        call_sites={
            name(caller): tuple(name(callee) for callee in callees)
            for caller, callees in code.call_sites.items()
        },
    )
