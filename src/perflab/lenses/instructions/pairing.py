"""One function is one row across two builds. Objects that are another build of the baseline's under
another file name, and functions the builds spell differently (or a CPU copy run in place of the
baseline's), are named as in the baseline."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from perflab.lenses.instructions.counts import VariantCounts
from perflab.lenses.instructions.explain import FunctionDelta
from perflab.tool_output.callgrind import FunctionCosts, FunctionId
from perflab.tool_output.object_names import invert, pair_objects
from perflab.tool_output.symbol_names import (
    NamePairing,
    dispatch_pairs,
    pair_names,
    with_dispatches,
)


def paired_costs(
    baseline: FunctionCosts, variant: FunctionCosts
) -> tuple[FunctionCosts, dict[str, str]]:
    """The variant's costs with each object that is another build of a baseline object under
    another file name (`tools.object_names.pair_objects`) renamed to the baseline's name, so
    one function is one row; and the pairs (baseline name -> variant name)."""
    pairs = pair_objects(
        {fid.object for fid in baseline.functions}, {fid.object for fid in variant.functions}
    )
    if not pairs:
        return variant, {}
    renamed = variant.renamed(lambda fid: FunctionId(fid.name, pairs.get(fid.object, fid.object)))
    return renamed, invert(pairs)


def with_variant_objects(
    deltas: Sequence[FunctionDelta], pairs: Mapping[str, str]
) -> tuple[FunctionDelta, ...]:
    return tuple(
        replace(d, variant_object=pairs[d.object]) if d.object in pairs else d for d in deltas
    )


def respelled(
    base: VariantCounts, other: VariantCounts, selectors: tuple[str, ...] = ()
) -> VariantCounts:
    """The variant's function tables with each function the builds spell differently named as
    in the baseline (`pair_names`, the rule every lens shares), so one function is one row;
    and each CPU copy that ran in place of the baseline's under a selector that differs
    (`dispatch_pairs`) too, so the two copies' counts are compared on one row."""
    if base.costs is None or other.costs is None:
        return other
    # callgrind's names and the inline-aware view's (from debug info) are spelled by different
    # demanglers, so each table is paired with its own kind
    pairing = name_pairing(base.costs, other.costs, selectors)
    attributed = other.attributed
    if base.attributed is not None and attributed is not None:
        by_frames = name_pairing(base.attributed, attributed, selectors)
        attributed = attributed.renamed(_renamer_of(by_frames))
        pairing = NamePairing(
            (*pairing.pairs, *(p for p in by_frames.pairs if p not in pairing.pairs)),
            (*pairing.unpaired, *(u for u in by_frames.unpaired if u not in pairing.unpaired)),
        )
    rename = _renamer_of(pairing)
    return replace(
        other,
        costs=other.costs.renamed(rename),
        attributed=attributed,
        parts={rename(fid): names for fid, names in other.parts.items()},
        spellings=pairing,
    )


def name_pairing(
    base: FunctionCosts, other: FunctionCosts, selectors: tuple[str, ...] = ()
) -> NamePairing:
    before, after = {f.name for f in base.functions}, {f.name for f in other.functions}
    pairing = pair_names(before, after)
    if not selectors:
        return pairing
    objects = {f.name: f.object for costs in (base, other) for f in costs.functions}
    found = dispatch_pairs(before, after, selectors, object_of=objects)
    return with_dispatches(pairing, found)


def _renamer_of(pairing: NamePairing) -> Callable[[FunctionId], FunctionId]:
    def rename(fid: FunctionId) -> FunctionId:
        return FunctionId(pairing.variant_name(fid.name), fid.object)

    return rename


def with_spellings(
    deltas: Sequence[FunctionDelta], pairing: NamePairing
) -> tuple[FunctionDelta, ...]:
    out = []
    for d in deltas:
        pair = pairing.pair_of(d.name)
        if pair is not None and pair.baseline == d.name:
            d = replace(d, variant_spelling=(pair.variant, pair.reason))
        out.append(d)
    return tuple(out)
