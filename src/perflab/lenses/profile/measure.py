"""The profile lens: `perf record` sampled only inside the measured region, hot symbols per variant,
per-symbol deltas between variants and folded stacks for a differential flame graph.

Statements: each variant's worker runs under `perf record --control ... --delay -1` (events start
disabled); the parent enables sampling just before each timed loop and disables it right after,
through the worker's handshake. Variants alternate block by block as in the time lens, so both
profiles see the same machine state. Commands: `perf record` around the whole process.

Call graphs: DWARF unwinding by default. Frame pointers are cheaper but most distribution builds
of Python and its extensions omit them, which cuts stacks off at the first such frame; LBR gives
short (32-entry) user-space stacks and needs a real PMU. DWARF costs ~16 KB per sample, which at
~1,000 samples per variant is fine. If perf cannot record DWARF call graphs, frame pointers are
used instead; the choice made is recorded with the profile.

perf falls back from `cycles` to `cpu-clock` without a PMU (VMs) and says nothing; the event that
was really sampled is read back with `perf evlist` and reported.

The recording itself (`perf record` and `perf script`) is `measure/perf_record.py`, which the
asm lens records with too.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.diagnosis import Claim, Diagnosis
from perflab.document import FlameNode
from perflab.lenses.profile.cost import PROFILE_PROCESSES
from perflab.lenses.profile.flame import differential_tree
from perflab.measure.analysis_parallel import all_cpus, run_threads, runs_real_processes
from perflab.measure.callgrind import normalise_function_name
from perflab.measure.commands import command_argv
from perflab.measure.lens import BenchmarkData, LensAnalysis, LensContext
from perflab.measure.perf_control import find_perf
from perflab.measure.perf_record import (
    CallGraph,
    ProfiledWorker,
    RecordedProfile,
    RecordOptions,
    probe_recording,
    record_command_once,
)
from perflab.measure.perf_script import (
    HotSymbols,
    ProfileDiff,
    ProfileSample,
    Stack,
    diff_profiles,
    folded_stacks,
    hot_symbols,
    parse_folded,
    with_stack_evidence,
)
from perflab.measure.session import LensSession, WorkerWrap, benchmark_rng, loops_per_variant
from perflab.measure.worker_client import variant_environment
from perflab.model import (
    Artifact,
    Benchmark,
    BenchmarkKind,
    Experiment,
    Metric,
    Note,
    Sample,
    Severity,
    Variant,
)
from perflab.plan import block_orders
from perflab.proc import ProcessRunner
from perflab.stats.comparison import ONE_PROCESS_ALLOWANCE, comparison_from, one_process_verdict
from perflab.stats.family import family_settings
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.summary import per_iteration

FOLDED = "folded"  # artifact kind: folded stacks, frames `object`symbol`, root first
PROFILE_META = "profile-meta"  # artifact kind: JSON facts about how the profile was recorded
WALL_NS = "wall_ns"
_TOP_SYMBOLS_IN_SUMMARY = 20


# --- the lens -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileDetails:
    diff: ProfileDiff
    sampled_event: str
    call_graph: str
    baseline_samples: int
    variant_samples: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    # the merged call tree of both profiles, for the report's flame graph (not in the JSON)
    flame: FlameNode | None = field(default=None, compare=False)

    def diagnoses(self) -> tuple[Diagnosis, ...]:
        # both functions in one object: the program picked another of that object's functions
        # (a dispatch); in two objects (two builds), the caller's call site calls another one
        dispatches = tuple(
            Diagnosis(
                claim=Claim.DISPATCH_CHANGED
                if change.old_object == change.new_object
                else Claim.CALLEE_CHANGED,
                function=normalise_function_name(
                    change.old if change.old_object == change.new_object else change.caller
                ),
                evidence=change.evidence(),
                samples=min(change.old_samples, change.new_samples),
                detail={"from": change.old, "to": change.new, "caller": change.caller},
            )
            for change in self.diff.dispatches
        )
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
            "dispatch_changed": [change.to_json() for change in self.diff.dispatches],
            "sampled_event": self.sampled_event,
            "call_graph": self.call_graph,
            "baseline_samples": self.baseline_samples,
            "variant_samples": self.variant_samples,
            **self.extra,
        }


class ProfileLens:
    metric = Metric.PROFILE

    def __init__(
        self,
        *,
        region_s: float = 1.0,
        options: RecordOptions | None = None,
        max_command_runs: int = 10,
    ) -> None:
        self.region_s = region_s
        self.options = options or RecordOptions()
        self.max_command_runs = max_command_runs
        self._chosen: RecordOptions | None = None
        self._probe_events: list[str] = []

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        find_perf()
        self._chosen, self._probe_events = probe_recording(runner, self.options)
        notes = []
        if self._chosen.call_graph is not self.options.call_graph:
            notes.append(
                Note(
                    Severity.WARNING,
                    f"perf cannot record {self.options.call_graph} call graphs here; "
                    f"using {self._chosen.call_graph}",
                    metric=Metric.PROFILE,
                )
            )
        probe = RecordedProfile(self._chosen.event, tuple(self._probe_events), CallGraph.NONE, ())
        if probe.fell_back:
            notes.append(_fallback_note(self._chosen.event, self._probe_events))
        return notes

    def _options(self, runner: ProcessRunner) -> RecordOptions:
        if self._chosen is None:
            self._chosen, self._probe_events = probe_recording(runner, self.options)
        return self._chosen

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        options = self._options(context.runner)
        with tempfile.TemporaryDirectory(prefix="perflab-profile-") as tmp:
            if benchmark.kind is BenchmarkKind.STATEMENT:
                profiles = self._measure_statement(benchmark, context, options, Path(tmp))
            else:
                profiles = [
                    [p] for p in self._measure_command(benchmark, context, options, Path(tmp))
                ]
        for variant, parts in zip(context.experiment.variants, profiles, strict=True):
            for generation, profile in enumerate(parts):
                self._store(benchmark, variant, profile, context, generation, len(parts))

    def _measure_statement(
        self, benchmark: Benchmark, context: LensContext, options: RecordOptions, tmp: Path
    ) -> list[list[RecordedProfile]]:
        """Each variant in `PROFILE_PROCESSES` independent workers, one generation after the
        other, each recording its share of `region_s`: per variant, one profile per worker."""
        session = LensSession(benchmark, context, _now_ns, lens="profile")
        recorded: list[list[RecordedProfile]] = [[] for _ in context.experiment.variants]
        start = _now_ns()
        for generation in range(PROFILE_PROCESSES):
            profiles = self._statement_generation(
                benchmark, context, options, tmp, session, generation, start
            )
            for index, profile in enumerate(profiles):
                recorded[index].append(profile)
        return recorded

    def _statement_generation(
        self,
        benchmark: Benchmark,
        context: LensContext,
        options: RecordOptions,
        tmp: Path,
        session: LensSession,
        generation: int,
        start: int,
    ) -> list[RecordedProfile]:
        settings = context.experiment.settings
        variants = context.experiment.variants
        workers: dict[int, ProfiledWorker] = {}
        region_s = self.region_s / PROFILE_PROCESSES

        def wrap(index: int) -> WorkerWrap:
            workers[index] = ProfiledWorker(
                context.runner,
                options=options,
                data_path=tmp / f"{variants[index].name}-{generation}.perf.data",
            )
            return workers[index].wrap

        with session.generation(wrap=wrap) as started:
            for index, worker in enumerate(started):
                workers[index].started(worker)
            loops = loops_per_variant(
                [workers[i] for i in range(len(variants))], int(settings.sample_target_ms * 1e6)
            )
            for block, order in enumerate(block_orders(len(variants), session.rng)):
                warmup = block < settings.warmup_blocks
                for position, index in enumerate(order):
                    measured = workers[index].sample(loops[index], record=not warmup)
                    context.sink.add_sample(
                        Sample(
                            benchmark=benchmark.name,
                            variant=variants[index].name,
                            metric=Metric.PROFILE,
                            name=WALL_NS,
                            value=measured.wall_ns,
                            loops=loops[index],
                            generation=generation,
                            block=block,
                            position=position,
                            cpu=measured.cpu,
                            at_ns=_now_ns() - start,
                            warmup=warmup,
                        )
                    )
                recorded_s = min(w.region_ns for w in workers.values()) / 1e9
                done_s = generation * region_s + recorded_s
                context.progress.update(
                    benchmark=benchmark.name,
                    metric=Metric.PROFILE,
                    detail=f"process {generation + 1} of {PROFILE_PROCESSES}, block {block + 1}, "
                    f"{done_s:.1f} s recorded per variant",
                    fraction=min(1.0, done_s / self.region_s),
                )
                if recorded_s >= region_s:
                    break
            for index in range(len(variants)):
                workers[index].note_mapped_objects()
        # closed: every perf record has written its data, and nothing is measured any more, so
        # the variants' perf script runs may share every CPU
        with all_cpus():
            return run_threads(
                [workers[i].recorded for i in range(len(variants))],
                parallel=runs_real_processes(context.runner),
            )

    def _measure_command(
        self, benchmark: Benchmark, context: LensContext, options: RecordOptions, tmp: Path
    ) -> list[RecordedProfile]:
        experiment = context.experiment
        perf = find_perf()
        rng = benchmark_rng(experiment.settings, benchmark, "profile")
        variants = experiment.variants
        collected: list[list[ProfileSample]] = [[] for _ in variants]
        events: list[list[str]] = [[] for _ in variants]
        region_ns = [0 for _ in variants]
        runs = 0
        for block, order in enumerate(block_orders(len(variants), rng)):
            for position, index in enumerate(order):
                variant = variants[index]
                wall_ns, data = record_command_once(
                    context.runner,
                    perf,
                    options,
                    command_argv(benchmark.command_for(variant)),
                    variant_environment(variant),
                    variant.cwd,
                    context.cpu,
                    tmp / f"{index}-{block}.data",
                    experiment.settings.sample_timeout_s,
                )
                collected[index] += data.samples
                events[index] = events[index] or list(data.sampled_events)
                region_ns[index] += wall_ns
                context.sink.add_sample(
                    Sample(
                        benchmark=benchmark.name,
                        variant=variant.name,
                        metric=Metric.PROFILE,
                        name=WALL_NS,
                        value=wall_ns,
                        block=block,
                        position=position,
                    )
                )
            runs += 1
            if min(region_ns) >= self.region_s * 1e9 or runs >= self.max_command_runs:
                break
        return [
            RecordedProfile(
                options.event,
                tuple(events[i]),
                options.call_graph,
                tuple(collected[i]),
                runs,
                region_ns[i],
            )
            for i in range(len(variants))
        ]

    def _store(
        self,
        benchmark: Benchmark,
        variant: Variant,
        profile: RecordedProfile,
        context: LensContext,
        generation: int = 0,
        processes: int = 1,
    ) -> None:
        sink = context.sink
        for kind, content in (
            (FOLDED, folded_stacks(profile.samples)),
            (PROFILE_META, json.dumps(profile.meta())),
        ):
            sink.add_artifact(
                Artifact(benchmark.name, variant.name, Metric.PROFILE, kind, content, generation)
            )
        if not profile.samples:
            sink.add_note(
                Note(
                    Severity.WARNING,
                    "perf recorded no samples inside the measured region"
                    + (
                        f" of worker process {generation + 1} of {processes}"
                        if processes > 1
                        else ""
                    ),
                    hint="the region is too short: raise the profile duration",
                    benchmark=benchmark.name,
                    variant=variant.name,
                    metric=Metric.PROFILE,
                )
            )

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_profiles(benchmark, variants, data, experiment)


def _fallback_note(requested: str, sampled: Sequence[str], benchmark: str | None = None) -> Note:
    return Note(
        Severity.WARNING,
        f"perf sampled {', '.join(sampled)} instead of {requested}: no hardware PMU is available "
        "(a VM without a virtual PMU, or a CPU perf does not support); shares are of CPU time",
        hint="on bare metal, or a VM with PMU passthrough, cycles are sampled",
        benchmark=benchmark,
        metric=Metric.PROFILE,
    )


def _now_ns() -> int:
    return time.monotonic_ns()


def _per_generation(data: BenchmarkData, variant: str, kind: str) -> list[Artifact]:
    """The last artifact of `kind` of each worker process (generation), in generation order."""
    last = {artifact.generation: artifact for artifact in data.artifacts_of(variant, kind)}
    return [last[g] for g in sorted(last)]


def stored_parts(data: BenchmarkData, variant: str) -> list[Counter[Stack]]:
    """One variant's folded stacks per worker process, as the lens stored them."""
    return [parse_folded(a.content) for a in _per_generation(data, variant, FOLDED)]


def pooled_stacks(data: BenchmarkData, variant: str) -> Counter[Stack]:
    """One variant's folded stacks of every worker process together."""
    pooled: Counter[Stack] = Counter()
    for stacks in stored_parts(data, variant):
        pooled.update(stacks)
    return pooled


def stored_profile(data: BenchmarkData, variant: str) -> tuple[HotSymbols, dict[str, Any]]:
    """One variant's hot symbols and recording facts, from what the lens stored: its worker
    processes' samples together (`samples`, `loops` and `region_ns` summed)."""
    pooled: Counter[Stack] = Counter()
    for stacks in stored_parts(data, variant):
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
    settings = family_settings(experiment)
    baseline_name = variants[0]
    baseline, baseline_meta = stored_profile(data, baseline_name)
    baseline_parts = [hot_symbols(p) for p in stored_parts(data, baseline_name)]
    comparisons = []
    notes: list[Note] = []
    summaries = []
    for name in variants:
        summary, meta = stored_profile(data, name)
        summaries.append(
            {
                "benchmark": benchmark.name,
                "variant": name,
                **meta,
                "hot_symbols": [s.to_json() for s in summary.symbols[:_TOP_SYMBOLS_IN_SUMMARY]],
                "objects": [o.to_json() for o in summary.objects],
            }
        )
        if meta.get("fell_back") and name == baseline_name:
            notes.append(
                _fallback_note(meta["requested_event"], meta["sampled_events"], benchmark.name)
            )
    for name in variants[1:]:
        summary, meta = stored_profile(data, name)
        base_wall = data.samples_of(baseline_name, WALL_NS)
        var_wall = data.samples_of(name, WALL_NS)
        measured_blocks = len({s.block for s in base_wall if not s.warmup})
        # One worker per variant: group blocks into batches so the interval at least reflects
        # slow drift; per-process effects are not sampled (the time lens does that).
        pairs = pair_samples(base_wall, var_wall, batch_blocks=max(1, measured_blocks // 6))
        estimate = estimate_ratio(pairs, settings.confidence)
        base_value = per_iteration(base_wall)
        var_value = per_iteration(var_wall)
        comparisons.append(
            one_process_verdict(
                comparison_from(
                    estimate,
                    equivalence_band=settings.equivalence_band,
                    benchmark=benchmark.name,
                    metric=Metric.PROFILE,
                    baseline=baseline_name,
                    variant=name,
                    baseline_value=base_value,
                    variant_value=var_value,
                    unit="ns",  # wall time under perf record: see ratio_basis
                    details=ProfileDetails(
                        diff=with_stack_evidence(
                            diff_profiles(
                                baseline,
                                summary,
                                baseline_parts=baseline_parts,
                                variant_parts=[hot_symbols(p) for p in stored_parts(data, name)],
                            ),
                            pooled_stacks(data, baseline_name),
                            pooled_stacks(data, name),
                        ),
                        sampled_event=", ".join(meta.get("sampled_events", [])),
                        call_graph=str(meta.get("call_graph", "")),
                        baseline_samples=baseline.total_samples,
                        variant_samples=summary.total_samples,
                        extra={
                            "ratio_basis": "wall time of the profiled samples, one worker per "
                            "variant; use the time lens for a verdict",
                            "verdict_rule": f"one worker process per variant: faster or slower "
                            f"only beyond ±{ONE_PROCESS_ALLOWANCE:.0%}, never equivalent",
                            "baseline_call_graph": baseline_meta.get("call_graph"),
                        },
                        flame=flame_tree(data, baseline_name, name),
                    ),
                )
            )
        )
    for comparison in comparisons:
        if isinstance(comparison.details, ProfileDetails):
            notes += [
                Note(
                    Severity.INFO,
                    entry.unsettled_message(),
                    hint="profile longer (ProfileLens(region_s=...)) to settle it",
                    benchmark=benchmark.name,
                    variant=comparison.variant,
                    metric=Metric.PROFILE,
                )
                for entry in comparison.details.diff.unsettled
            ]
            notes += [
                Note(
                    Severity.INFO,
                    entry.message(),
                    benchmark=benchmark.name,
                    variant=comparison.variant,
                    metric=Metric.PROFILE,
                )
                for entry in comparison.details.diff.pass_through
            ]
            notes += [
                Note(
                    Severity.INFO,
                    entry.uneven_message(),
                    benchmark=benchmark.name,
                    variant=comparison.variant,
                    metric=Metric.PROFILE,
                )
                for entry in comparison.details.diff.uneven
            ]
    return LensAnalysis(tuple(comparisons), tuple(notes), {"profiles": summaries})


def flame_tree(data: BenchmarkData, baseline: str, variant: str) -> FlameNode | None:
    """The differential call tree of the two variants' recordings (every worker process's)."""
    base, other = stored_parts(data, baseline), stored_parts(data, variant)
    if not base or not other:
        return None
    return differential_tree(sum(base, Counter()), sum(other, Counter()))
