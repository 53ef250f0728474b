"""Functions that ran in one variant only, paired with the one that ran in the other instead:
one row, one dispatch_changed or callee_changed claim, when the evidence says they play one role.
Pure.

- one ISA's member of a dispatch family and another's, in one object (`isa_changes`);
- a function's copies for two CPUs, where the variants differ in what selects the copy
  (`cpu_copies`);
- one template's instantiations for two vector types, in one object (`vector_instances`);
- names one word apart in one object, the same word for every pair (`variant_changes`);
- callees a caller calls in place of each other (`cold_callers`, `pair_by_call_site`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from perflab.lenses.asm.claims import dispatch_claim, plain_name, ran_evidence, vector_width_change
from perflab.lenses.asm.code_diff import compare_functions
from perflab.lenses.asm.disassembly import vector_bits
from perflab.lenses.asm.identity import family, member
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.rows import Row, VariantCode, samples_text
from perflab.records.diagnosis import Claim, Diagnosis
from perflab.tool_output.object_names import object_basename
from perflab.tool_output.symbol_names import (
    DispatchPair,
    VectorPair,
    cpu_copy,
    dispatch_pairs,
    vector_pairs,
    word_change,
)


def _ran_in_one(rows: list[Row], explained: set[str]) -> tuple[list[Row], list[Row]]:
    """The rows not yet explained that ran in the baseline only, and in the variant only."""
    gone = [r for r in rows if r.baseline.ran and not r.variant.ran and r.name not in explained]
    new = [r for r in rows if r.variant.ran and not r.baseline.ran and r.name not in explained]
    return gone, new


def isa_changes(
    rows: list[Row], baseline: VariantCode, variant: VariantCode, explained: set[str]
) -> list[Row]:
    """The hottest code that ran in one variant only being one ISA's member of a dispatch
    family (ATen's `DEFAULT::`), and the hottest that ran in the other only another ISA's
    member, in the same object (same build-id): the dispatcher picked another ISA's kernel,
    whose functions the compiler shaped differently (`DEFAULT::vectorized_loop` called from a
    thin callback vs `AVX2::VectorizedLoop2d` with the loop inlined). One row, dispatch_changed."""
    gone, new = _ran_in_one(rows, explained)
    gone = [r for r in gone if member(r.baseline.primary.name)]  # type: ignore[union-attr]
    new = [r for r in new if member(r.variant.primary.name)]  # type: ignore[union-attr]
    if not gone or not new:
        return rows
    old_row, new_row = gone[0], new[0]  # rows are hottest first
    b, v = old_row.baseline, new_row.variant
    assert b.primary is not None and v.primary is not None
    left = baseline.identities.get(b.primary.object_path)
    right = variant.identities.get(v.primary.object_path)
    old_isa, new_isa = member(b.primary.name), member(v.primary.name)
    if left is None or left != right or old_isa == new_isa:
        return rows
    samples = int(min(b.samples, v.samples))
    where = object_basename(b.primary.object_path)
    evidence = (
        *ran_evidence(b, v),
        f"both in {where} ({left}): its {old_isa} code ran, then its {new_isa} code",
    )
    diagnoses = [dispatch_claim(old_row.name, b.primary, v.primary, evidence, samples)]
    diagnoses += vector_width_change(old_row.name, b.primary, v.primary, samples)
    merged = Row(
        name=old_row.name,
        baseline=b,
        variant=v,
        change=compare_functions(old_row.name, b.primary, v.primary),
        diagnoses=tuple(diagnoses),
        notes=(),
        paired_by=f"paired by dispatch: {old_isa} -> {new_isa} in {where}",
    )
    explained.update({old_row.name, new_row.name})
    return [merged if r is old_row else r for r in rows if r is not new_row]


def cpu_copies(
    rows: list[Row],
    baseline: VariantCode,
    variant: VariantCode,
    explained: set[str],
    selectors: tuple[str, ...],
) -> list[Row]:
    """A function's copy for one CPU that ran in the baseline only and its copy for another
    that ran in the variant only, in one object (the same build-id), where the variants differ
    in what selects the copy (`dispatch_pairs`, the rule every lens shares: `DOUBLE_add_X86_V3`
    -> `DOUBLE_add` under NPY_DISABLE_CPU_FEATURES). One row that compares the two copies'
    code (vector widths, instructions per element); dispatch_changed, never inlining."""
    gone, new = _ran_in_one(rows, explained)
    if not selectors or not gone or not new:
        return rows
    sides = _OneSided.of(gone, new, baseline, variant)
    pairs = dispatch_pairs(sides.gone, sides.new, selectors, object_of=sides.objects)
    found = []
    for pair in pairs:
        paired_by = (
            f"paired by dispatch: {cpu_word(pair.baseline)} -> {cpu_word(pair.variant)} "
            f"copies of {pair.stem} in {sides.file_of(pair.baseline)}, selected by "
            + "; ".join(pair.selectors)
        )
        found.append((pair, (*pair.evidence()[:1], *pair.selectors), paired_by))
    return _merged(rows, sides.rows, found, explained)


def vector_instances(
    rows: list[Row],
    baseline: VariantCode,
    variant: VariantCode,
    explained: set[str],
    selectors: tuple[str, ...],
) -> list[Row]:
    """One template's instantiation for one vector type that ran in the baseline only and its
    instantiation for another that ran in the variant only, in one object (`vector_pairs`, the
    rule every lens shares: `sort_n_vec<zmm_vector<float>, ...>` -> `sort_n_vec<avx2_vector<
    float>, ...>`). One row that compares the two (vector widths); dispatch_changed."""
    gone, new = _ran_in_one(rows, explained)
    if not gone or not new:
        return rows
    sides = _OneSided.of(gone, new, baseline, variant)
    found = []
    for pair in vector_pairs(sides.gone, sides.new, object_of=sides.objects):
        evidence = (f"names: {pair.reason}", *selectors)
        paired_by = (
            f"paired by template: one template instantiated for {pair.arguments_text} in "
            f"{sides.file_of(pair.baseline)}, each the only instantiation of it that ran in its "
            "variant"
        )
        found.append((pair, evidence, paired_by))
    return _merged(rows, sides.rows, found, explained)


@dataclass(frozen=True)
class _OneSided:
    """The rows that ran on one side only, by the name their listing has there (`gone`: the
    baseline's, `new`: the variant's), and each name's object: its file name and build-id."""

    rows: dict[str, Row]
    gone: tuple[str, ...]
    new: tuple[str, ...]
    objects: dict[str, str]
    files: dict[str, str]

    @classmethod
    def of(
        cls, gone: list[Row], new: list[Row], baseline: VariantCode, variant: VariantCode
    ) -> _OneSided:
        rows: dict[str, Row] = {}
        objects: dict[str, str] = {}
        files: dict[str, str] = {}
        names: tuple[list[str], list[str]] = ([], [])
        for index, row, side, code in [(0, r, r.baseline, baseline) for r in gone] + [
            (1, r, r.variant, variant) for r in new
        ]:
            assert side.primary is not None
            name = plain_name(side.primary.name)
            rows[name] = row
            names[index].append(name)
            path = side.primary.object_path
            identity_text = code.identities.get(path)
            files[name] = object_basename(path)
            objects[name] = f"{files[name]} ({identity_text})" if identity_text else path
        return cls(rows, tuple(names[0]), tuple(names[1]), objects, files)

    def file_of(self, name: str) -> str:
        return self.files[name]


def _merged(
    rows: list[Row],
    by_name: dict[str, Row],
    found: Sequence[tuple[DispatchPair | VectorPair, tuple[str, ...], str]],
    explained: set[str],
) -> list[Row]:
    """`rows` with each found pair (the pair, its evidence, why it was paired) one row."""
    merged: dict[str, Row] = {}
    dropped: set[str] = set()
    for pair, evidence, paired_by in found:
        old_row, new_row = by_name[pair.baseline], by_name[pair.variant]
        if old_row.name in merged or new_row.name in dropped:
            continue
        merged[old_row.name] = _replacement_row(old_row, new_row, pair, evidence, paired_by)
        dropped.add(new_row.name)
        explained.update({old_row.name, new_row.name})
    return [merged.get(r.name, r) for r in rows if r.name not in dropped]


def _replacement_row(
    old_row: Row,
    new_row: Row,
    pair: DispatchPair | VectorPair,
    named: tuple[str, ...],
    paired_by: str,
) -> Row:
    b, v = old_row.baseline, new_row.variant
    assert b.primary is not None and v.primary is not None
    samples = int(min(b.samples, v.samples))
    evidence = (
        *ran_evidence(b, v, " only"),
        *named,
        f"disassembly: hot loop {_loop_text(b.primary)} (baseline), {_loop_text(v.primary)} "
        "(variant)",
    )
    claim = dispatch_claim(old_row.name, b.primary, v.primary, evidence, samples)
    claim = replace(claim, detail={**claim.detail, **pair.to_json()})
    diagnoses = [claim, *vector_width_change(old_row.name, b.primary, v.primary, samples)]
    return Row(
        name=f"{old_row.name} -> {new_row.name}",
        baseline=b,
        variant=v,
        change=compare_functions(old_row.name, b.primary, v.primary),
        diagnoses=tuple(diagnoses),
        notes=(),
        paired_by=paired_by,
    )


def variant_changes(
    rows: list[Row], baseline: VariantCode, variant: VariantCode, explained: set[str]
) -> list[Row]:
    """Functions that ran in the baseline only paired with functions that ran in the variant
    only when they are in one object (the same build-id), and their names differ in one word,
    the same word for every pair (`dgemm_kernel_SKYLAKEX` -> `dgemm_kernel_HASWELL`,
    `dgemm_oncopy_SKYLAKEX` -> `dgemm_oncopy_HASWELL`): one library's build for another CPU,
    picked at run time by a spelling no list knows. The object and the samples are the
    evidence; the name only says which of its functions play one role. dispatch_changed."""
    found = _one_word_pairs(*_ran_in_one(rows, explained), baseline, variant)
    words = {change for _, _, change in found}
    if not found or len(words) != 1:
        return rows  # no pair, or pairs that do not agree on one word: no claim
    (old_word, new_word) = next(iter(words))
    merged: dict[str, Row] = {}
    dropped: set[str] = set()
    for old_row, new_row, _ in found:
        b, v = old_row.baseline, new_row.variant
        assert b.primary is not None and v.primary is not None
        samples = int(min(b.samples, v.samples))
        evidence = (
            *ran_evidence(b, v, " only"),
            f"both in {object_basename(b.primary.object_path)} "
            f"({baseline.identities.get(b.primary.object_path)}): its {old_word} code "
            f"ran, then its {new_word} code",
        )
        diagnoses = [dispatch_claim(old_row.name, b.primary, v.primary, evidence, samples)]
        diagnoses += vector_width_change(old_row.name, b.primary, v.primary, samples)
        merged[old_row.name] = Row(
            name=f"{old_row.name} -> {new_row.name}",
            baseline=b,
            variant=v,
            change=compare_functions(old_row.name, b.primary, v.primary),
            diagnoses=tuple(diagnoses),
            notes=(),
            paired_by=f"paired by object and name: {old_word} -> {new_word} in "
            f"{object_basename(b.primary.object_path)}",
        )
        dropped.add(new_row.name)
        explained.update({old_row.name, new_row.name})
    return [merged.get(r.name, r) for r in rows if r.name not in dropped]


def _one_word_pairs(
    gone: list[Row], new: list[Row], baseline: VariantCode, variant: VariantCode
) -> list[tuple[Row, Row, tuple[str, str]]]:
    """Each row that ran in the baseline only with the first that ran in the variant only in the
    same object under a name one word apart, and that word's change."""
    found: list[tuple[Row, Row, tuple[str, str]]] = []
    used: set[str] = set()
    for old_row in gone:
        before = old_row.baseline.primary
        if before is None:
            continue
        for new_row in new:
            after = new_row.variant.primary
            if after is None or new_row.name in used:
                continue
            left = baseline.identities.get(before.object_path)
            if left is None or left != variant.identities.get(after.object_path):
                continue
            change = word_change(plain_name(before.name), plain_name(after.name))
            if change is not None:
                found.append((old_row, new_row, change))
                used.add(new_row.name)
                break
    return found


def _loop_text(listing: FunctionListing) -> str:
    """A copy's hot loop as counted facts: its instructions and its widest vector register."""
    loop = [line for line in listing.lines if line.in_hot_loop]
    if not loop:
        return f"not found in {listing.symbol}"
    bits = max((vector_bits(line.instruction) for line in loop), default=0)
    return f"of {len(loop)} instructions, {bits or 'no'}-bit vectors, in {listing.symbol}"


def cpu_word(name: str) -> str:
    return cpu_copy(name)[1] or "unsuffixed"


def _callee_family(name: str) -> str:
    return family(name.split("@", 1)[0])


def cold_callers(
    rows: list[Row], baseline: VariantCode, variant: VariantCode, explained: set[str]
) -> list[Row]:
    """A callee that ran in the baseline only and another that ran in the variant only, called
    from one caller that calls the first in the baseline and the second in the variant (its
    disassembly, even when it is too cold for a row): callee_changed, said about the caller."""
    gone, new = _ran_in_one(rows, explained)
    if not gone or not new:
        return rows
    extra = _retargeted_calls(gone, new, baseline, variant, explained)
    if not extra:
        return rows
    out = []
    for row in rows:
        found = extra.pop(row.name, [])
        out.append(replace(row, diagnoses=(*row.diagnoses, *found)) if found else row)
    # a caller without a row of its own carries the claim on the callee's row
    for diagnoses in extra.values():
        for d in diagnoses:
            target = family(str(d.detail["from"]).split("@", 1)[0])
            out = [replace(r, diagnoses=(*r.diagnoses, d)) if r.name == target else r for r in out]
    return out


def _retargeted_calls(
    gone: list[Row],
    new: list[Row],
    baseline: VariantCode,
    variant: VariantCode,
    explained: set[str],
) -> dict[str, list[Diagnosis]]:
    """Caller -> its callee_changed claims: it calls a function that ran in the baseline only
    there, and one that ran in the variant only there instead."""
    extra: dict[str, list[Diagnosis]] = {}
    for caller, old_calls in baseline.call_sites.items():
        new_calls = variant.call_sites.get(caller)
        if new_calls is None:
            continue
        before = {_callee_family(c): c for c in old_calls}
        after = {_callee_family(c): c for c in new_calls}
        for x in gone:
            for y in new:
                if x.name not in before or x.name in after or y.name not in after:
                    continue
                if y.name in before or x.name in explained or y.name in explained:
                    continue
                evidence = (
                    f"objdump: {caller} calls {before[x.name]} (baseline)",
                    f"objdump: {caller} calls {after[y.name]} instead (variant)",
                    f"perf: {x.name} ran in the baseline only "
                    f"({samples_text(x.baseline.samples, x.baseline.total)}), {y.name} in "
                    f"the variant only ({samples_text(y.variant.samples, y.variant.total)})",
                )
                samples = int(min(x.baseline.samples, y.variant.samples))
                detail = {"from": before[x.name], "to": after[y.name]}
                claim = Diagnosis(Claim.CALLEE_CHANGED, caller, evidence, samples, detail)
                extra.setdefault(caller, []).append(claim)
                explained.update({x.name, y.name})
    return extra


def pair_by_call_site(rows: list[Row]) -> list[Row]:
    """A callee that ran in the baseline only and the one the same call site calls instead in
    the variant play one role: one row, so the first row shows what each variant ran most."""
    by_name = {row.name: row for row in rows}
    merged: dict[str, Row] = {}
    dropped: set[str] = set()
    for row in rows:
        for d in row.diagnoses:
            if d.claim is not Claim.CALLEE_CHANGED:
                continue
            old, new = (
                by_name.get(family(str(d.detail["from"]))),
                by_name.get(family(str(d.detail["to"]))),
            )
            if old is None or new is None or old.name in merged or new.name in dropped:
                continue
            if not (old.baseline.ran and not old.variant.ran):
                continue
            if not (new.variant.ran and not new.baseline.ran):
                continue
            name = f"{old.name} -> {new.name}"
            change = compare_functions(name, old.baseline.primary, new.variant.primary)
            merged[old.name] = Row(
                name=name,
                baseline=old.baseline,
                variant=new.variant,
                change=change,
                diagnoses=(*old.diagnoses, *new.diagnoses),
                notes=(*old.notes, *new.notes),
                paired_by=(
                    f"paired by call site: {d.function} calls {d.detail['from']} in the "
                    f"baseline and {d.detail['to']} in the variant"
                ),
                not_run=(*old.not_run, *new.not_run),
            )
            dropped.add(new.name)
    out = [merged.get(row.name, row) for row in rows if row.name not in dropped]
    out.sort(key=lambda row: -row.hotness)
    return out
