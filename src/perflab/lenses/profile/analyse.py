"""The profile lens's analysis: the stored folded stacks and recording facts -> hot symbols per
variant, per-symbol deltas with their claims (appeared, disappeared, dispatch changed) and the
differential flame tree, one comparison per variant."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.lenses.profile.flame import differential_tree
from perflab.lenses.profile.metric import PROFILE
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.measure.perf.runs import WALL_NS  # the recorder writes the samples this reads
from perflab.records.diagnosis import Claim, Diagnosis
from perflab.records.document import FlameNode
from perflab.records.model import Artifact, Benchmark, Comparison, Experiment, Note, Severity
from perflab.records.settings import Settings
from perflab.stats.comparison import ONE_PROCESS_ALLOWANCE, SideValues, Subject, comparison_from
from perflab.stats.family import family_settings
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.summary import mean_per_iteration
from perflab.tool_drivers.elf_dispatch import SharedResolver, read_ifuncs, shared_resolver
from perflab.tool_output.callgrind import normalise_function_name
from perflab.tool_output.profile_diff import DispatchChange, ProfileDiff, diff_profiles
from perflab.tool_output.profile_evidence import with_stack_evidence
from perflab.tool_output.profile_stacks import (
    HotSymbols,
    Stack,
    hot_symbols,
    parse_folded,
    respelled_stacks,
    stack_symbols,
)
from perflab.tool_output.symbol_names import (
    DispatchPair,
    NamePairing,
    dispatch_pairs,
    pair_names,
    selector_changes,
)

FOLDED = "folded"  # artifact kind: folded stacks, frames `object`symbol`, root first
PROFILE_META = "profile-meta"  # artifact kind: JSON facts about how the profile was recorded
# hottest symbols in each variant's JSON summary, to keep it short; the stored folded stacks hold
# them all
_TOP_SYMBOLS_IN_SUMMARY = 20


@dataclass(frozen=True)
class RecordingSummary:
    """One variant's recording of a benchmark: how it was recorded and what was hot."""

    variant: str
    # what the recording stored of itself (`stored_profile`: events, call graph, samples ...)
    facts: Mapping[str, Any]
    hot: HotSymbols  # its worker processes' samples together

    def to_json(self, benchmark: str) -> dict[str, Any]:
        return {
            "benchmark": benchmark,
            "variant": self.variant,
            **{key: value for key, value in self.facts.items() if key != "mapped_objects"},
            "hot_symbols": [s.to_json() for s in self.hot.symbols[:_TOP_SYMBOLS_IN_SUMMARY]],
            "objects": [o.to_json() for o in self.hot.objects],
        }


@dataclass(frozen=True)
class ProfileFindings:
    """What the profile lens found of one benchmark beside its comparisons: each variant's
    recording summarised (the JSON document's `profiles`)."""

    benchmark: str
    recordings: tuple[RecordingSummary, ...]

    def to_json(self) -> dict[str, Any]:
        return {"profiles": [r.to_json(self.benchmark) for r in self.recordings]}


@dataclass(frozen=True)
class ProfileDetails:
    """The profile lens's facts behind one benchmark's comparison (the JSON export's `details`): the
    symbol diff, how it was sampled, and the dispatch evidence."""

    diff: ProfileDiff
    sampled_event: str
    call_graph: str
    baseline_samples: int
    variant_samples: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    # the merged call tree of both profiles, for the report's flame graph (not in the JSON)
    flame: FlameNode | None = field(default=None, compare=False)
    # dispatch pairs whose functions the same-named IFUNC's resolver returns on each side
    resolvers: tuple[SharedResolver, ...] = ()
    # what differs between the variants in choosing a library's compiled copy (`selector_changes`):
    # with it, a pair of CPU copies of one object is a dispatch by evidence
    selectors: tuple[str, ...] = ()

    def _cpu_pair_of(self, change: DispatchChange) -> DispatchPair | None:
        if change.old_object != change.new_object:
            return None
        caller = {} if change.unwound else {change.old: change.caller, change.new: change.caller}
        found = dispatch_pairs(
            [change.old],
            [change.new],
            self.selectors,
            callers=caller,
            object_of={change.old: change.old_object, change.new: change.new_object},
        )
        return found[0] if found else None

    def _resolver_of(self, change: DispatchChange) -> SharedResolver | None:
        return next((r for r in self.resolvers if (r.old, r.new) == (change.old, change.new)), None)

    def _dispatch_diagnosis(self, change: DispatchChange) -> Diagnosis:
        # both functions in one object: the program picked another of that object's functions;
        # in two objects (two builds), another function at the caller's call site, which is a
        # dispatch only where each build's resolver of one IFUNC returns it (ELF evidence)
        resolver = self._resolver_of(change)
        same_object = change.old_object == change.new_object
        if same_object or resolver is not None:
            claim = Claim.DISPATCH_CHANGED
            function = change.old if same_object or resolver is None else resolver.ifunc
        else:
            claim, function = Claim.CALLEE_CHANGED, change.caller
        # two CPU copies of one object, the variants differing in what selects them: the
        # claim names the selector (the variable, the object, the caller)
        copies = self._cpu_pair_of(change)
        evidence = change.evidence() + ((resolver.evidence(),) if resolver else ())
        detail: dict[str, Any] = {"from": change.old, "to": change.new, "caller": change.caller}
        if copies is not None:
            evidence += copies.evidence()
            detail.update(object=copies.object_name, selected_by=list(copies.selectors))
        return Diagnosis(
            claim=claim,
            function=normalise_function_name(function),
            evidence=evidence,
            samples=min(change.old_samples, change.new_samples),
            detail=detail,
        )

    def diagnoses(self) -> tuple[Diagnosis, ...]:
        dispatches = tuple(self._dispatch_diagnosis(change) for change in self.diff.dispatches)
        return dispatches + tuple(
            Diagnosis(
                claim=Claim.APPEARED if entry.appeared else Claim.DISAPPEARED,
                function=normalise_function_name(entry.name),
                evidence=entry.evidence(),
                samples=entry.samples,
                detail={"object": entry.object, "symbol": entry.name},
            )
            for entry in self.diff.claims
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "symbols": [d.to_json() for d in self.diff.symbols],
            "appeared": list(self.diff.appeared),
            "disappeared": list(self.diff.disappeared),
            "diagnoses": [d.to_json() for d in self.diagnoses()],
            "unsettled": [entry.to_json() for entry in self.diff.unsettled],
            "uneven": [entry.to_json() for entry in self.diff.uneven],
            "pass_through": [entry.to_json() for entry in self.diff.pass_through],
            "dispatch_changed": [self._dispatch_json(change) for change in self.diff.dispatches],
            "sampled_event": self.sampled_event,
            "call_graph": self.call_graph,
            "baseline_samples": self.baseline_samples,
            "variant_samples": self.variant_samples,
            **self.extra,
        }

    def _dispatch_json(self, change: DispatchChange) -> dict[str, Any]:
        # beside the pair: what it is claimed as (a pair across two builds without a shared
        # resolver is a callee change) and the resolvers' evidence
        resolver = self._resolver_of(change)
        diagnosis = self._dispatch_diagnosis(change)
        copies = self._cpu_pair_of(change)
        return {
            **change.to_json(),
            **(resolver.to_json() if resolver else {}),
            **({"selected_by": list(copies.selectors)} if copies else {}),
            "claim": str(diagnosis.claim),
            "evidence": list(diagnosis.evidence),
        }


def fallback_note(requested: str, sampled: Sequence[str], benchmark: str | None = None) -> Note:
    return Note(
        Severity.WARNING,
        f"perf sampled {', '.join(sampled)} instead of {requested}: no hardware PMU is available "
        "(a VM without a virtual PMU, or a CPU perf does not support); shares are of CPU time",
        hint="on bare metal, or a VM with PMU passthrough, cycles are sampled",
        benchmark=benchmark,
        metric=PROFILE,
    )


def _per_generation(data: BenchmarkData, variant: str, kind: str) -> list[Artifact]:
    """The last artifact of `kind` of each worker process (generation), in generation order."""
    last = {artifact.generation: artifact for artifact in data.artifacts_of(variant, kind)}
    return [last[g] for g in sorted(last)]


def stored_stacks(data: BenchmarkData, variant: str) -> list[Counter[Stack]]:
    """One variant's folded stacks per worker process, as the lens stored them."""
    return [parse_folded(a.content) for a in _per_generation(data, variant, FOLDED)]


def pooled_stacks(data: BenchmarkData, variant: str) -> Counter[Stack]:
    """One variant's folded stacks of every worker process together."""
    pooled: Counter[Stack] = Counter()
    for stacks in stored_stacks(data, variant):
        pooled.update(stacks)
    return pooled


def stored_profile(data: BenchmarkData, variant: str) -> tuple[HotSymbols, dict[str, Any]]:
    """One variant's hot symbols and recording facts, from what the lens stored: its worker
    processes' samples together (`samples`, `loops` and `region_ns` summed)."""
    pooled: Counter[Stack] = Counter()
    for stacks in stored_stacks(data, variant):
        pooled.update(stacks)
    summary = hot_symbols(pooled) if pooled else HotSymbols(0, (), ())
    metas = [json.loads(a.content) for a in _per_generation(data, variant, PROFILE_META)]
    facts: dict[str, Any] = dict(metas[-1]) if metas else {}
    if len(metas) > 1:
        for key in ("samples", "loops", "region_ns"):
            facts[key] = sum(int(m.get(key, 0)) for m in metas)
        facts["processes"] = len(metas)
    return summary, facts


def analyse_profiles(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, experiment: Experiment
) -> LensAnalysis:
    """The profile lens's analysis of a benchmark's stored profiles: each variant's hot
    functions compared with the baseline's, with notes on a fallback event and on what each
    profile diff shows; every variant's recording summarised."""
    settings = family_settings(experiment)
    summary, meta = stored_profile(data, variants[0])
    baseline = _Baseline(
        variants[0], summary, meta, [hot_symbols(p) for p in stored_stacks(data, variants[0])]
    )
    summaries = [_recording_summary(data, name) for name in variants]
    notes: list[Note] = []
    if baseline.meta.get("fell_back"):
        notes.append(
            fallback_note(
                baseline.meta["requested_event"], baseline.meta["sampled_events"], benchmark.name
            )
        )
    envs = {v.name: v.env for v in experiment.variants}
    comparisons = [
        _profile_comparison(
            benchmark,
            data,
            settings,
            baseline,
            name,
            selector_changes(envs.get(variants[0], {}), envs.get(name, {})),
        )
        for name in variants[1:]
    ]
    for comparison in comparisons:
        if isinstance(comparison.details, ProfileDetails):
            notes += _diff_notes(benchmark, comparison.variant, comparison.details.diff)
    return LensAnalysis(
        tuple(comparisons), tuple(notes), ProfileFindings(benchmark.name, tuple(summaries))
    )


@dataclass(frozen=True)
class _Baseline:
    """The baseline's stored profile, read once for every comparison."""

    name: str
    summary: HotSymbols  # of its worker processes together
    meta: dict[str, Any]
    parts: list[HotSymbols]  # per worker process


def _recording_summary(data: BenchmarkData, variant: str) -> RecordingSummary:
    summary, meta = stored_profile(data, variant)
    return RecordingSummary(variant, meta, summary)


def _profile_comparison(
    benchmark: Benchmark,
    data: BenchmarkData,
    settings: Settings,
    baseline: _Baseline,
    name: str,
    selectors: tuple[str, ...] = (),
) -> Comparison:
    base_wall = data.samples_of(baseline.name, WALL_NS)
    var_wall = data.samples_of(name, WALL_NS)
    measured_blocks = len({s.block for s in base_wall if not s.warmup})
    # One worker per variant: group blocks into batches so the interval at least reflects
    # slow drift; per-process effects are not sampled (the time lens does that).
    pairs = pair_samples(base_wall, var_wall, batch_blocks=max(1, measured_blocks // 6))
    estimate = estimate_ratio(pairs, settings.confidence)
    return comparison_from(
        estimate,
        Subject(benchmark.name, PROFILE, baseline.name, name),
        SideValues(mean_per_iteration(base_wall), mean_per_iteration(var_wall), "ns"),
        equivalence_band=settings.equivalence_band,
        details=_profile_details(data, baseline, name, selectors),
        one_process=True,
    )


def _profile_details(
    data: BenchmarkData, baseline: _Baseline, name: str, selectors: tuple[str, ...] = ()
) -> ProfileDetails:
    summary, meta = stored_profile(data, name)
    base_stacks = pooled_stacks(data, baseline.name)
    parts = stored_stacks(data, name)
    pairing = pair_names(
        stack_symbols(base_stacks), {s for part in parts for s in stack_symbols(part)}
    )
    parts = [respelled_stacks(part, pairing) for part in parts]
    variant_stacks: Counter[Stack] = Counter()
    for part in parts:
        variant_stacks.update(part)
    if pairing.pairs and variant_stacks:
        summary = hot_symbols(variant_stacks)
    diff = diff_profiles(
        baseline.summary,
        summary,
        baseline_parts=baseline.parts,
        variant_parts=[hot_symbols(p) for p in parts],
    )
    diff = with_stack_evidence(diff, base_stacks, variant_stacks)
    return ProfileDetails(
        diff=diff,
        sampled_event=", ".join(meta.get("sampled_events", [])),
        call_graph=str(meta.get("call_graph", "")),
        baseline_samples=baseline.summary.total_samples,
        variant_samples=summary.total_samples,
        extra={
            "ratio_basis": "wall time of the profiled samples, one worker per "
            "variant; use the time lens for a verdict",
            "verdict_rule": f"one worker process per variant: faster or slower "
            f"only beyond ±{ONE_PROCESS_ALLOWANCE:.0%}, never equivalent",
            "baseline_call_graph": baseline.meta.get("call_graph"),
            "spellings": _spellings(pairing),
        },
        flame=flame_tree(data, baseline.name, name),
        resolvers=shared_resolvers(
            diff.dispatches, mapped_paths(data, baseline.name), mapped_paths(data, name)
        ),
        selectors=selectors,
    )


def _spellings(pairing: NamePairing) -> list[dict[str, Any]]:
    """The functions the two builds spell differently, taken for one (or not), and why."""
    return [
        {"baseline": p.baseline, "variant": p.variant, "why": p.reason} for p in pairing.pairs
    ] + [{"baseline": u.baseline, "variant": u.variant, "why": u.reason} for u in pairing.unpaired]


def mapped_paths(data: BenchmarkData, variant: str) -> dict[str, str]:
    """Object file name (as the folded stacks name it) -> its path, from what every worker
    process mapped executable while it was profiled."""
    paths: dict[str, str] = {}
    for artifact in _per_generation(data, variant, PROFILE_META):
        for path in json.loads(artifact.content).get("mapped_objects") or []:
            paths.setdefault(os.path.basename(str(path)), str(path))
    return paths


def shared_resolvers(
    changes: Sequence[DispatchChange],
    baseline_paths: Mapping[str, str],
    variant_paths: Mapping[str, str],
) -> tuple[SharedResolver, ...]:
    """The dispatch pairs that one IFUNC's resolver returns, one function per side, read from
    the objects' ELF files (a pair whose objects are gone or unknown has none)."""
    found = []
    for change in changes:
        old_path = baseline_paths.get(change.old_object)
        new_path = variant_paths.get(change.new_object)
        if old_path is None or new_path is None:
            continue
        resolver = shared_resolver(
            change.old,
            change.old_object,
            read_ifuncs(old_path),
            change.new,
            change.new_object,
            read_ifuncs(new_path),
        )
        if resolver is not None:
            found.append(resolver)
    return tuple(found)


def _diff_notes(benchmark: Benchmark, variant: str, diff: ProfileDiff) -> list[Note]:
    """What a profile diff could not settle, and what it saw pass through or spread unevenly."""
    unsettled = [
        Note(
            Severity.INFO,
            entry.unsettled_message(),
            hint="profile longer (ProfileLens(region_s=...)) to settle it",
            benchmark=benchmark.name,
            variant=variant,
            metric=PROFILE,
        )
        for entry in diff.unsettled
    ]
    messages = [entry.message() for entry in diff.pass_through]
    messages += [entry.uneven_message() for entry in diff.uneven]
    return unsettled + [
        Note(Severity.INFO, message, benchmark=benchmark.name, variant=variant, metric=PROFILE)
        for message in messages
    ]


def flame_tree(data: BenchmarkData, baseline: str, variant: str) -> FlameNode | None:
    """The differential call tree of the two variants' recordings (every worker process's)."""
    base, other = stored_stacks(data, baseline), stored_stacks(data, variant)
    if not base or not other:
        return None
    return differential_tree(sum(base, Counter()), sum(other, Counter()))
