"""The instructions lens's comparisons between variants, from each variant's counts read back
(`counts.py`): the verdict on the count, the explanation (function table, inlining, layers) and
one comparison per simulated cache event. Pure: no processes; `InstructionsLens.analyse` and
`perflab show` call `analyse_instructions`."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.lenses.instructions.counts import (
    DumpsRead,
    VariantCounts,
    process_note,
    variant_counts,
)
from perflab.lenses.instructions.details import InstructionsDetails
from perflab.lenses.instructions.explain import FunctionDelta, function_deltas
from perflab.lenses.instructions.inlining import (
    CannotTell,
    InliningChange,
    ReplacedCall,
    cannot_tell,
    inlining_changes,
    replacements,
)
from perflab.lenses.instructions.layers import LayerDelta, LayerRule, compile_layers, layer_deltas
from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.lenses.instructions.options import layers_of
from perflab.lenses.instructions.pairing import (
    paired_costs,
    respelled,
    with_spellings,
    with_variant_objects,
)
from perflab.measure.callgrind.artifacts import (
    unexecutable_reason,
)
from perflab.measure.callgrind.dumps import CACHE_EVENTS, DerivedEvent
from perflab.measure.lens import LensAnalysis
from perflab.records.model import (
    Benchmark,
    BenchmarkData,
    Comparison,
    Experiment,
    Measurement,
    Note,
    Severity,
)
from perflab.stats.comparison import SideValues, Subject, comparison_from
from perflab.stats.summary import process_count_interval, process_ratio_interval
from perflab.tool_output.callgrind import FunctionId, derived_event
from perflab.tool_output.object_names import invert
from perflab.tool_output.symbol_names import selector_changes

# functions that ran on one side only and cost less than this (per iteration) get no "cannot
# tell" note: below the residue of the worker's handshake that remains in statement counts
_MIN_NOTED_COST = 2.0
_MIN_NOTED_FRACTION = 1e-4


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
    read = DumpsRead()  # variants that ran the same code stored the same dumps
    counts = {name: variant_counts(data, name, read) for name in variants}
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
        other = respelled(base, counts[name], selectors)
        if not base.per_iteration_by_repeat or not other.per_iteration_by_repeat:
            missing = name if other.per_iteration_by_repeat == () else base_name
            if missing not in unexecutable:
                notes.append(_no_counts_note(benchmark, missing))
            continue
        pair = _CountedPair(benchmark, base_name, name, base, other, band)
        comparison = _comparison(pair, rules)
        comparisons.append(comparison)
        if isinstance(comparison.details, InstructionsDetails):
            notes += _cannot_tell_notes(benchmark, name, comparison.details)
        for event in CACHE_EVENTS:
            if event.name in base.samples and event.name in other.samples:
                comparisons.append(_event_comparison(pair, event))
    # one variant has nothing to compare with: its own count is the answer
    alone = own_count(benchmark, base_name, base) if len(variants) == 1 else None
    measured = (alone,) if alone is not None else ()
    return LensAnalysis(tuple(comparisons), tuple(notes), measurements=measured)


def own_count(benchmark: Benchmark, variant: str, counts: VariantCounts) -> Measurement | None:
    """A variant's own instructions per iteration: the median repeat, with an interval spanning
    every repeat widened by how far its worker processes settled apart (as a comparison's)."""
    repeats = counts.per_iteration_by_repeat
    processes = counts.processes or (repeats,)
    value, low, high = process_count_interval(processes)
    if not repeats or math.isnan(value):
        return None
    return Measurement(
        benchmark=benchmark.name,
        metric=INSTRUCTIONS,
        variant=variant,
        value=value,
        ci_low=low,
        ci_high=high,
        unit="instructions",
        n_groups=len(processes),
        group_name="process",
        mean=statistics.fmean(repeats),
        stddev=statistics.stdev(repeats) if len(repeats) > 1 else math.nan,
        median=statistics.median(repeats),
        min=min(repeats),
        max=max(repeats),
        estimator="median of repeats",
        times=repeats,
    )


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
        metric=INSTRUCTIONS,
    )


def _no_counts_note(benchmark: Benchmark, variant: str) -> Note:
    return Note(
        Severity.WARNING,
        "no instruction counts were stored for this variant",
        benchmark=benchmark.name,
        variant=variant,
        metric=INSTRUCTIONS,
    )


def _cannot_tell_notes(benchmark: Benchmark, name: str, details: InstructionsDetails) -> list[Note]:
    return [
        Note(
            Severity.INFO,
            entry.message(),
            hint="rebuild with -g (the inline frames of executed code are the evidence)",
            benchmark=benchmark.name,
            variant=name,
            metric=INSTRUCTIONS,
        )
        for entry in details.cannot_tell
    ]


@dataclass(frozen=True)
class _CountedPair:
    """A variant against the baseline in one benchmark: their names, counts and the band."""

    benchmark: Benchmark
    base_name: str
    name: str
    base: VariantCounts
    other: VariantCounts
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
            Subject(self.benchmark.name, INSTRUCTIONS, self.base_name, self.name),
            SideValues(details.baseline_per_iteration, details.variant_per_iteration, unit),
            equivalence_band=self.band,
            event=event,
            details=details,
        )


def _comparison(pair: _CountedPair, rules: Sequence[LayerRule]) -> Comparison:
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
        baseline_per_iteration=statistics.median(base.per_iteration_by_repeat),
        variant_per_iteration=statistics.median(other.per_iteration_by_repeat),
        functions=why.functions,
        inlining=why.inlining,
        layers=why.layers,
        attribution=why.attribution,
        replacements=why.replacements,
        baseline_repeats=base.per_iteration_by_repeat,
        variant_repeats=other.per_iteration_by_repeat,
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
    replacements: tuple[ReplacedCall, ...] = ()


def _explanation(
    base: VariantCounts, other: VariantCounts, rules: Sequence[LayerRule]
) -> _Explanation:
    if base.costs is None or other.costs is None:
        return _Explanation()
    inlining = inlining_changes(base.evidence, other.evidence)
    functions, attribution = function_table(base, other)
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


def function_table(
    base: VariantCounts, other: VariantCounts
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
    return with_spellings(functions, other.spellings), attribution


def _event_comparison(pair: _CountedPair, event: DerivedEvent) -> Comparison:
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


def _levels_of(counts: VariantCounts) -> tuple[float, ...]:
    levels = counts.levels
    return levels.levels if levels is not None else ()
