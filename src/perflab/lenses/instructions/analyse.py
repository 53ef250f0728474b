"""The instructions lens's analysis of stored data: what a variant's samples and callgrind
artifacts say once read back (counts per repeat, costs per function, inline evidence, the main
program) and the comparisons between variants. Pure: no processes; `InstructionsLens.analyse`
and `perflab show` call `analyse_instructions`."""

from __future__ import annotations

import json
import os
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.lenses.instructions.evidence import (
    InlineEvidence,
    inline_evidence,
    reattribute_inlined,
)
from perflab.lenses.instructions.explain import FunctionDelta, function_deltas
from perflab.lenses.instructions.inlining import (
    CannotTell,
    InliningChange,
    Replacement,
    cannot_tell,
    inlining_changes,
    replacements,
)
from perflab.lenses.instructions.layers import LayerDelta, compile_layers, layer_deltas
from perflab.lenses.instructions.options import layers_of
from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_INLINE_FRAMES,
    KIND_OBJECTS,
    KIND_STATEMENT,
    SAMPLE_NAME,
    parts_of,
    unexecutable_reason,
)
from perflab.measure.callgrind.dumps import CACHE_EVENTS, DerivedEvent, instructions_of
from perflab.measure.lens import LensAnalysis
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, BenchmarkData, Comparison, Experiment, Note, Severity
from perflab.stats.comparison import SideValues, Subject, comparison_from
from perflab.stats.summary import ProcessLevels, process_levels, process_ratio_interval
from perflab.tools.callgrind import (
    INSTRUCTIONS_EVENT,
    CallgrindPart,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
    combine_parts,
    derived_event,
    function_parts,
    normalise_function_id,
)
from perflab.tools.debuginfo import AddressFrames, frames_from_json
from perflab.tools.object_names import invert, pair_objects
from perflab.tools.symbol_names import (
    NamePairing,
    dispatch_pairs,
    pair_names,
    selector_changes,
    with_dispatches,
)

# functions that ran on one side only and cost less than this (per iteration) get no "cannot
# tell" note: below the residue of the worker's handshake that remains in statement counts
_MIN_NOTED_COST = 2.0
_MIN_NOTED_FRACTION = 1e-4
# programs a command may run its benchmark's program through: never the program itself
_LAUNCHERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "env", "time", "nice", "taskset"})


def instructions_difference(
    minuend: Sequence[CallgrindPart], subtrahend: Sequence[CallgrindPart]
) -> InstructionCosts | None:
    """Per-instruction costs of the statement's loop minus the empty loop's (the statement
    alone), instructions whose costs cancel out dropped."""
    first, second = instructions_of(minuend), instructions_of(subtrahend)
    if first is None or second is None or first.events != second.events:
        return None
    # sums kept in lists beside the first row seen, rows built once at the end: there is a row
    # per executed instruction on each side, so per-row records would dominate the cost
    totals: dict[tuple[FunctionId, int], tuple[InstructionCost, list[float]]] = {}
    for sign, rows in ((1.0, first.rows), (-1.0, second.rows)):
        for row in rows:
            key = (row.function, row.address)
            have = totals.get(key)
            if have is None:
                totals[key] = (row, [sign * x for x in row.cost])
                continue
            sums = have[1]
            if len(sums) != len(row.cost):
                raise ValueError(f"rows of {len(sums)} and {len(row.cost)} costs at {key}")
            for i, x in enumerate(row.cost):
                sums[i] += sign * x
    return InstructionCosts(
        first.events,
        tuple(
            InstructionCost(row.function, row.address, row.file, row.line, tuple(sums))
            for row, sums in totals.values()
            if any(sums)
        ),
    )


# -- analysis results ------------------------------------------------------------------------


@dataclass(frozen=True)
class InstructionsDetails:
    """The instructions part of a comparison's JSON (the contract names are kept)."""

    baseline_per_iteration: float
    variant_per_iteration: float
    functions: tuple[FunctionDelta, ...]
    inlining: tuple[InliningChange, ...]
    layers: tuple[LayerDelta, ...] = ()
    attribution: str = "callgrind"  # or "inline-aware": costs re-attributed via debug info
    # callees the variant calls in place of the baseline's (callee_changed diagnoses)
    replacements: tuple[Replacement, ...] = ()
    baseline_repeats: tuple[float, ...] = ()
    variant_repeats: tuple[float, ...] = ()
    event: str = INSTRUCTIONS_EVENT
    max_functions: int = 50
    equivalence_band: float | None = None
    cannot_tell: tuple[CannotTell, ...] = ()
    programs: Mapping[str, str] = field(default_factory=dict)  # side -> the program's file name
    identical_objects: tuple[str, ...] = ()  # byte-identical in both variants
    # each worker process's level (median of its repeats), when a variant had several
    baseline_processes: tuple[float, ...] = ()
    variant_processes: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "baseline_per_iteration": self.baseline_per_iteration,
            "variant_per_iteration": self.variant_per_iteration,
            "callgrind_event": self.event,
            "attribution": self.attribution,
            "baseline_repeats": list(self.baseline_repeats),
            "variant_repeats": list(self.variant_repeats),
            "functions": [_function_json(d) for d in self._shown_functions()],
            "inlining_changes": [change.to_json() for change in self.inlining],
            "diagnoses": [change.diagnosis().to_json() for change in self.inlining]
            + [replaced.diagnosis().to_json() for replaced in self.replacements],
            "cannot_tell": [entry.to_json() for entry in self.cannot_tell],
        }
        if self.equivalence_band is not None:
            out["equivalence_band"] = self.equivalence_band
        if self.programs:
            out["programs"] = dict(self.programs)
        if self.identical_objects:
            out["identical_objects"] = list(self.identical_objects)
        if len(self.baseline_processes) > 1 or len(self.variant_processes) > 1:
            out["baseline_processes"] = list(self.baseline_processes)
            out["variant_processes"] = list(self.variant_processes)
        if self.layers:
            out["layers"] = [layer.to_json() for layer in self.layers]
        return out

    def _shown_functions(self) -> tuple[FunctionDelta, ...]:
        """The `max_functions` largest changes, and every row that says the CPU ran other code
        (its count did not change: it would fall below the cap)."""
        shown = self.functions[: self.max_functions]
        return shown + tuple(d for d in self.functions[self.max_functions :] if d.cpu_ran)


def with_cpu_ran(details: object, ran: Mapping[str, tuple[str, str]]) -> InstructionsDetails | None:
    """`details` with each function valgrind ran while the CPU ran another dispatch target
    (`ran`: function -> the CPU's (baseline, variant)) saying so (`FunctionDelta.cpu_ran`), so
    the row says it where it is shown; None when `details` are not this lens's."""
    if not isinstance(details, InstructionsDetails):
        return None
    functions = tuple(
        replace(d, cpu_ran=ran[d.name]) if d.name in ran else d for d in details.functions
    )
    return replace(details, functions=functions)


def _function_json(d: FunctionDelta) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": d.name,
        "object": d.object,
        "file": d.file,
        "baseline": d.baseline_self,
        "variant": d.variant_self,
        "delta": d.delta_self,
        "baseline_inclusive": d.baseline_inclusive,
        "variant_inclusive": d.variant_inclusive,
        "delta_inclusive": d.delta_inclusive,
        "presence": str(d.presence),
    }
    if d.parts:
        out["parts"] = list(d.parts)
    if d.baseline_name is not None:
        out["signature_changed"] = {"from": d.baseline_name, "to": d.name}
    if d.variant_object is not None:
        out["variant_object"] = d.variant_object
    if d.variant_spelling is not None:
        out["spelled_in_variant"] = {"name": d.variant_spelling[0], "why": d.variant_spelling[1]}
    if d.cpu_ran is not None:
        out["cpu_ran"] = {"baseline": d.cpu_ran[0], "variant": d.cpu_ran[1]}
    return out


def paired_costs(
    baseline: FunctionCosts, variant: FunctionCosts
) -> tuple[FunctionCosts, dict[str, str]]:
    """The variant's costs with each object that is another build of a baseline object under
    another file name (`measure.object_names.pair_objects`) renamed to the baseline's name, so
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


@dataclass(frozen=True)
class _VariantCounts:
    """What analyse derives for one variant from the store."""

    per_iteration: tuple[float, ...]  # one value per repeat, in repeat order
    samples: Mapping[str, tuple[float, ...]]  # derived events per repeat
    costs: FunctionCosts | None  # per iteration, normalised, repeat 0
    attributed: FunctionCosts | None  # inline-aware view, when frames were stored
    evidence: InlineEvidence = field(default_factory=InlineEvidence)
    parts: Mapping[FunctionId, tuple[str, ...]] = field(default_factory=dict)
    program: str | None = None
    # per worker process (Sample.block): its repeats' per-iteration counts, and its first
    # repeat's generation (where its callgrind files are)
    processes: tuple[tuple[float, ...], ...] = ()
    first_generations: tuple[int, ...] = ()
    # the same grouping for every counted event (cache events under the cache simulation)
    processes_by_name: Mapping[str, tuple[tuple[float, ...], ...]] = field(default_factory=dict)
    # how this variant's names were respelled as the baseline's (`_respelled`)
    spellings: NamePairing = field(default_factory=NamePairing)

    @property
    def levels(self) -> ProcessLevels | None:
        return process_levels(self.processes)


def _respelled(
    base: _VariantCounts, other: _VariantCounts, selectors: tuple[str, ...] = ()
) -> _VariantCounts:
    """The variant's function tables with each function the builds spell differently named as
    in the baseline (`pair_names`, the rule every lens shares), so one function is one row;
    and each CPU copy that ran in place of the baseline's under a selector that differs
    (`dispatch_pairs`) too, so the two copies' counts are compared on one row."""
    if base.costs is None or other.costs is None:
        return other
    # callgrind's names and the inline-aware view's (from debug info) are spelled by different
    # demanglers, so each table is paired with its own kind
    pairing = _pairing(base.costs, other.costs, selectors)
    attributed = other.attributed
    if base.attributed is not None and attributed is not None:
        by_frames = _pairing(base.attributed, attributed, selectors)
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


def _pairing(
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


def _with_spellings(
    deltas: Sequence[FunctionDelta], pairing: NamePairing
) -> tuple[FunctionDelta, ...]:
    out = []
    for d in deltas:
        pair = pairing.pair_of(d.name)
        if pair is not None and pair.baseline == d.name:
            d = replace(d, variant_spelling=(pair.variant, pair.reason))
        out.append(d)
    return tuple(out)


def _per_process(
    data: BenchmarkData, variant: str, name: str = SAMPLE_NAME
) -> tuple[tuple[tuple[float, ...], ...], tuple[int, ...]]:
    """The variant's counts of `name` grouped by worker process (a command's repeats: each a
    process; runs stored before processes were recorded: one process)."""
    grouped: dict[int, list[tuple[int, float]]] = {}
    for sample in data.samples_of(variant, name):
        if not sample.warmup:
            grouped.setdefault(sample.block, []).append((sample.generation, sample.per_iteration))
    ordered = [sorted(grouped[block]) for block in sorted(grouped)]
    return (
        tuple(tuple(v for _, v in group) for group in ordered),
        tuple(group[0][0] for group in ordered),
    )


def _per_iteration_by_name(data: BenchmarkData, variant: str) -> dict[str, tuple[float, ...]]:
    grouped: dict[str, list[tuple[int, float]]] = {}
    for sample in data.samples_of(variant):
        if not sample.warmup:  # repeats counted before the allocator's state settled
            grouped.setdefault(sample.name, []).append((sample.generation, sample.per_iteration))
    return {name: tuple(v for _, v in sorted(values)) for name, values in grouped.items()}


def _loops_of(data: BenchmarkData, variant: str, generation: int) -> int:
    for sample in data.samples_of(variant, SAMPLE_NAME):
        if sample.generation == generation:
            return sample.loops
    return 1


def _costs_of_repeat(
    data: BenchmarkData, variant: str, generation: int
) -> tuple[FunctionCosts, InstructionCosts | None, float] | None:
    """Costs of one repeat (statement minus empty loop, or the whole command), the raw
    per-instruction costs, and the scale to per-iteration."""
    scale = 1.0 / _loops_of(data, variant, generation)
    stmt = [a for a in data.artifacts_of(variant, KIND_STATEMENT) if a.generation == generation]
    if stmt:
        empty = [a for a in data.artifacts_of(variant, KIND_EMPTY) if a.generation == generation]
        stmt_parts, empty_parts = parts_of(stmt), parts_of(empty)
        costs = combine_parts(stmt_parts) - combine_parts(empty_parts)
        return costs, instructions_difference(stmt_parts, empty_parts), scale
    whole = [a for a in data.artifacts_of(variant, KIND_COMMAND) if a.generation == generation]
    if not whole:
        return None
    parts = parts_of(whole)
    return combine_parts(parts), instructions_of(parts), scale


def _frames_of(data: BenchmarkData, variant: str) -> dict[str, AddressFrames] | None:
    stored = data.artifacts_of(variant, KIND_INLINE_FRAMES)
    if not stored:
        return None
    raw: dict[str, dict[str, list[object]]] = json.loads(stored[0].content)
    return {obj: frames_from_json(by_address) for obj, by_address in raw.items()}


def _identities_of(data: BenchmarkData, variant: str) -> dict[str, str]:
    stored = data.artifacts_of(variant, KIND_OBJECTS)
    if not stored:
        return {}
    raw: dict[str, str | None] = json.loads(stored[0].content)
    return {path: identity for path, identity in raw.items() if identity}


_COMMAND_LINE = re.compile(r"^cmd:\s*(\S+)", re.MULTILINE)
_TOTAL_LINE = re.compile(r"^(?:summary|totals):\s*(\d+)", re.MULTILINE)
MAIN_OBJECT = "[main]"


def main_program(commands: Sequence[tuple[str, float]]) -> str | None:
    """The benchmark's program among the processes callgrind followed ((program, instructions)
    each): not a shell or launcher it ran through, the busiest of the rest. Variants often run
    differently named programs (build-a/bench vs bench-noinline, python3.11 vs python3.12),
    whose own functions must still be compared with each other."""
    named = [(os.path.basename(program), total) for program, total in commands]
    candidates = [(name, total) for name, total in named if name not in _LAUNCHERS] or named
    if not candidates:
        return None
    return max(candidates, key=lambda item: item[1])[0]


def _main_object(data: BenchmarkData, variant: str) -> str | None:
    commands = []
    for artifact in data.artifacts_of(variant):
        match = _COMMAND_LINE.search(artifact.content)
        if match:
            totals = _TOTAL_LINE.findall(artifact.content)
            commands.append((match.group(1), float(sum(int(t) for t in totals))))
    return main_program(commands)


def _renamer(main: str | None) -> Callable[[FunctionId], FunctionId]:
    def rename(fid: FunctionId) -> FunctionId:
        out = normalise_function_id(fid)
        return FunctionId(out.name, MAIN_OBJECT) if main and out.object == main else out

    return rename


def _variant_counts(data: BenchmarkData, variant: str) -> _VariantCounts:
    by_name = _per_iteration_by_name(data, variant)
    processes, first_generations = _per_process(data, variant)
    # the function table: the first process's first compared repeat
    repeat = _costs_of_repeat(data, variant, first_generations[0] if first_generations else 0)
    main = _main_object(data, variant)
    rename = _renamer(main)
    costs = attributed = None
    parts: dict[FunctionId, tuple[str, ...]] = {}
    evidence = InlineEvidence()
    if repeat is not None:
        raw, instructions, scale = repeat
        raw = raw.scaled(scale).without_zero()
        costs = raw.renamed(rename)
        parts = function_parts(raw, rename)
        frames = _frames_of(data, variant)
        per_iteration = None
        if instructions is not None:
            per_iteration = instructions.scaled(scale)
        if frames is not None and per_iteration is not None:
            view = reattribute_inlined(per_iteration, frames)
            attributed = view.renamed(rename)
            parts = {**function_parts(view, rename), **parts}
        evidence = inline_evidence(
            raw, per_iteration, frames or {}, rename, _identities_of(data, variant)
        )
    return _VariantCounts(
        per_iteration=by_name.get(SAMPLE_NAME, ()),
        samples=by_name,
        costs=costs,
        attributed=attributed,
        evidence=evidence,
        parts=parts,
        program=main,
        processes=processes,
        first_generations=first_generations,
        processes_by_name={name: _per_process(data, variant, name)[0] for name in by_name},
    )


def analyse_instructions(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    experiment: Experiment,
    *,
    equivalence_band: float | None = None,
) -> LensAnalysis:
    """Compare variants[1:] with variants[0]. Verdicts use the experiment's equivalence band,
    as every lens does (a 0.12% change is `equivalent` here as in the time lens), unless
    `equivalence_band` overrides it."""
    if not variants:
        return LensAnalysis()
    band = experiment.settings.equivalence_band if equivalence_band is None else equivalence_band
    rules = compile_layers(layers_of(experiment.settings))
    counts = {name: _variant_counts(data, name) for name in variants}
    base_name = variants[0]
    base = counts[base_name]
    comparisons: list[Comparison] = []
    notes: list[Note] = [
        note
        for name in variants
        if (note := process_note(benchmark, name, counts[name], data)) is not None
    ]
    unexecutable = {
        name: reason for name in variants if (reason := unexecutable_reason(data, name)) is not None
    }
    notes += [_unexecutable_note(benchmark, name, reason) for name, reason in unexecutable.items()]
    envs = {v.name: v.env for v in experiment.variants}
    for name in variants[1:]:
        selectors = selector_changes(envs.get(base_name, {}), envs.get(name, {}))
        other = _respelled(base, counts[name], selectors)
        if not base.per_iteration or not other.per_iteration:
            missing = name if other.per_iteration == () else base_name
            if missing not in unexecutable:
                notes.append(_no_counts_note(benchmark, missing))
            continue
        pair = _Pair(benchmark, base_name, name, base, other, band)
        comparison = _comparison(pair, rules)
        comparisons.append(comparison)
        if isinstance(comparison.details, InstructionsDetails):
            notes += _cannot_tell_notes(benchmark, name, comparison.details)
        for event in CACHE_EVENTS:
            if event.name in base.samples and event.name in other.samples:
                comparisons.append(_event_comparison(pair, event))
    return LensAnalysis(comparisons=tuple(comparisons), notes=tuple(notes))


def _unexecutable_note(benchmark: Benchmark, name: str, reason: str) -> Note:
    return Note(
        Severity.WARNING,
        f"valgrind cannot execute the code of `{name}`, so its instructions are not "
        f"counted; valgrind stopped it: {reason}",
        hint="valgrind 3.19 executes no AVX-512 instruction: build or run that variant "
        "without AVX-512 (e.g. ATEN_CPU_CAPABILITY=avx2) to count it; the time, counters, "
        "profile and asm lenses measure it as it is",
        benchmark=benchmark.name,
        variant=name,
        metric=Metric.INSTRUCTIONS,
    )


def _no_counts_note(benchmark: Benchmark, variant: str) -> Note:
    return Note(
        Severity.WARNING,
        "no instruction counts were stored for this variant",
        benchmark=benchmark.name,
        variant=variant,
        metric=Metric.INSTRUCTIONS,
    )


def _cannot_tell_notes(benchmark: Benchmark, name: str, details: InstructionsDetails) -> list[Note]:
    return [
        Note(
            Severity.INFO,
            entry.message(),
            hint="rebuild with -g (the inline frames of executed code are the evidence)",
            benchmark=benchmark.name,
            variant=name,
            metric=Metric.INSTRUCTIONS,
        )
        for entry in details.cannot_tell
    ]


@dataclass(frozen=True)
class _Pair:
    """A variant against the baseline in one benchmark: their names, counts and the band."""

    benchmark: Benchmark
    base_name: str
    name: str
    base: _VariantCounts
    other: _VariantCounts
    band: float

    def comparison(
        self,
        interval: tuple[float, float, float],
        details: InstructionsDetails,
        unit: str,
        event: str | None = None,
    ) -> Comparison:
        return comparison_from(
            interval,
            Subject(self.benchmark.name, Metric.INSTRUCTIONS, self.base_name, self.name),
            SideValues(details.baseline_per_iteration, details.variant_per_iteration, unit),
            equivalence_band=self.band,
            event=event,
            details=details,
        )


def _comparison(pair: _Pair, rules: Sequence[Any]) -> Comparison:
    base, other, band = pair.base, pair.other, pair.band
    # the interval spans every process, widened by how far each side's processes are apart
    interval = process_ratio_interval(base.processes, other.processes)
    why = _explanation(base, other, rules)
    identical = sorted(
        obj
        for obj, identity in base.evidence.identities.items()
        if other.evidence.identities.get(obj) == identity
    )
    details = InstructionsDetails(
        baseline_per_iteration=statistics.median(base.per_iteration),
        variant_per_iteration=statistics.median(other.per_iteration),
        functions=why.functions,
        inlining=why.inlining,
        layers=why.layers,
        attribution=why.attribution,
        replacements=why.replacements,
        baseline_repeats=base.per_iteration,
        variant_repeats=other.per_iteration,
        equivalence_band=band,
        cannot_tell=why.cannot_tell,
        programs={
            side: program
            for side, program in (("baseline", base.program), ("variant", other.program))
            if program
        },
        identical_objects=tuple(identical),
        baseline_processes=_levels_of(base),
        variant_processes=_levels_of(other),
    )
    return pair.comparison(interval, details, "instructions")


@dataclass(frozen=True)
class _Explanation:
    """What the two sides' function tables say about the difference (nothing without them)."""

    functions: tuple[FunctionDelta, ...] = ()
    inlining: tuple[InliningChange, ...] = ()
    cannot_tell: tuple[CannotTell, ...] = ()
    layers: tuple[LayerDelta, ...] = ()
    attribution: str = "callgrind"  # whose view the function table is
    replacements: tuple[Replacement, ...] = ()


def _explanation(base: _VariantCounts, other: _VariantCounts, rules: Sequence[Any]) -> _Explanation:
    if base.costs is None or other.costs is None:
        return _Explanation()
    inlining = inlining_changes(base.evidence, other.evidence)
    functions, attribution = _function_table(base, other)
    floor = max(_MIN_NOTED_COST, _MIN_NOTED_FRACTION * base.costs.total())
    unknown = cannot_tell(
        function_deltas(base.costs, other.costs),
        base.evidence,
        other.evidence,
        inlining,
        min_cost=floor,
    )
    layers = layer_deltas(base.costs, other.costs, rules) if rules else ()
    replaced = replacements(base.evidence, other.evidence, functions)
    return _Explanation(functions, inlining, unknown, layers, attribution, replaced)


def _function_table(
    base: _VariantCounts, other: _VariantCounts
) -> tuple[tuple[FunctionDelta, ...], str]:
    """The per-function deltas, and whose view they are: the inline-aware one when both sides
    have it (the real change), else callgrind's."""
    assert base.costs is not None and other.costs is not None
    table_base, table_other, attribution = base.costs, other.costs, "callgrind"
    if base.attributed is not None and other.attributed is not None:
        table_base, table_other = base.attributed, other.attributed
        attribution = "inline-aware"
    table_other, pairs = paired_costs(table_base, table_other)
    parts = {
        **{
            FunctionId(fid.name, invert(pairs).get(fid.object, fid.object)): names
            for fid, names in other.parts.items()
        },
        **base.parts,
    }
    functions = with_variant_objects(function_deltas(table_base, table_other, parts=parts), pairs)
    return _with_spellings(functions, other.spellings), attribution


def _event_comparison(pair: _Pair, event: DerivedEvent) -> Comparison:
    base, other = pair.base, pair.other
    before, after = base.samples[event.name], other.samples[event.name]
    interval = process_ratio_interval(
        base.processes_by_name.get(event.name, (before,)),
        other.processes_by_name.get(event.name, (after,)),
    )
    functions: tuple[FunctionDelta, ...] = ()
    if base.costs is not None and other.costs is not None:
        before_costs = derived_event(base.costs, event.name, event.components)
        after_costs, pairs = paired_costs(
            before_costs, derived_event(other.costs, event.name, event.components)
        )
        functions = with_variant_objects(
            function_deltas(before_costs, after_costs, event.name), pairs
        )
    details = InstructionsDetails(
        baseline_per_iteration=statistics.median(before),
        variant_per_iteration=statistics.median(after),
        functions=functions,
        inlining=(),
        baseline_repeats=before,
        variant_repeats=after,
        event=event.name,
    )
    return pair.comparison(interval, details, event.unit, event=event.name)


def _levels_of(counts: _VariantCounts) -> tuple[float, ...]:
    levels = counts.levels
    return levels.levels if levels is not None else ()


# functions named in the note on disagreeing processes
_NAMED_FUNCTIONS = 3


def process_difference(
    data: BenchmarkData, variant: str, low: int, high: int
) -> tuple[FunctionDelta, ...]:
    """Per-function costs (per iteration) of two repeats of one variant compared, the largest
    differences first: where two worker processes that counted differently differ."""
    first, second = _costs_of_repeat(data, variant, low), _costs_of_repeat(data, variant, high)
    if first is None or second is None:
        return ()
    rename = _renamer(_main_object(data, variant))

    def per_iteration(
        repeat: tuple[FunctionCosts, InstructionCosts | None, float],
    ) -> FunctionCosts:
        costs, _, scale = repeat
        return costs.scaled(scale).without_zero().renamed(rename)

    return function_deltas(per_iteration(first), per_iteration(second))


def process_note(
    benchmark: Benchmark, variant: str, counts: _VariantCounts, data: BenchmarkData
) -> Note | None:
    """A warning when a variant's worker processes settled at different levels: identical code
    counted differently by process, so the interval spans every process, and which functions
    the difference is in (the lowest process against the highest)."""
    levels = counts.levels
    if levels is None or not levels.disagree:
        return None
    low = min(range(len(levels.levels)), key=levels.levels.__getitem__)
    high = max(range(len(levels.levels)), key=levels.levels.__getitem__)
    deltas = process_difference(
        data, variant, counts.first_generations[low], counts.first_generations[high]
    )
    named = [d for d in deltas if abs(d.delta_self) > 0][:_NAMED_FUNCTIONS]
    where = ""
    if named:
        where = "; the highest differs from the lowest most in " + ", ".join(
            f"{d.name} ({d.object}, {d.delta_self:+,.1f})" for d in named
        )
    counted = ", ".join(f"{level:,.1f}" for level in levels.levels)
    return Note(
        Severity.WARNING,
        f"the {len(levels.levels)} worker processes of `{variant}` counted {counted} "
        f"instructions per iteration ({levels.between:.2%} apart; repeats inside one process "
        f"within {levels.within:.3%}): the count depends on the process, not only on the code, "
        f"so the interval spans every process{where}",
        hint="a verdict needs a difference larger than this spread; docs/lenses/instructions.md "
        "lists what makes processes differ",
        benchmark=benchmark.name,
        variant=variant,
        metric=Metric.INSTRUCTIONS,
    )
