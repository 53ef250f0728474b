"""The time lens's analysis: stored wall-time samples -> paired comparisons (each read off
lenses/time/interval_basis.py's interval), each variant's own time, and the notes
(lenses/time/notes.py) on noise, preemption and overload."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from perflab.lenses.time.artifacts import (
    WALL_NS,
    command_units_of,
    exit_codes_of,
    server_rounds_of,
    shared_cpu_of,
    time_series,
)
from perflab.lenses.time.interval_basis import IntervalBasis, interval_basis
from perflab.lenses.time.metric import TIME
from perflab.lenses.time.notes import (
    finding_note,
    measured_once_notes,
    noise_notes,
    overload_note,
    preemption_notes,
)
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.document import TimeSeries
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import (
    Benchmark,
    Comparison,
    Experiment,
    Measurement,
    Note,
    Sample,
    Severity,
)
from perflab.records.settings import Settings
from perflab.stats import noise, preemption
from perflab.stats.comparison import ONE_PROCESS_ALLOWANCE, SideValues, Subject, comparison_from
from perflab.stats.family import family_confidence, run_family_size
from perflab.stats.overload import OverloadCheck, seconds_to_decide_under_load
from perflab.stats.paired import (
    PairedLogRatio,
    RatioEstimate,
    SampleGroups,
    estimate_ratio,
    kept_pairs,
    own_log_values,
    unit_means,
)
from perflab.stats.sequential import seconds_to_decide, sequence_alpha, sequence_interval
from perflab.stats.summary import relative_spread
from perflab.stats.trimmed import trimmed_ratio
from perflab.stats.variant_values import (
    VALUE_ESTIMATOR,
    VariantCentres,
    VariantValues,
    estimator_name,
    paired_centres,
    paired_spreads,
)


@dataclass(frozen=True)
class TimeDetails:
    """The time lens's facts behind one comparison (the JSON export's `details`): groups, spreads,
    the sequential interval, and the raw values the report plots."""

    n_groups: int
    n_pairs: int
    between_group_sd: float
    baseline_spread: float  # relative MAD of the baseline's per-iteration times
    variant_spread: float
    extra_seconds_to_decide: float | None
    # the confidence sequence at the run's last look (stats.sequential): what an early stop
    # is decided on; wider than the CI, which it contains
    sequence_ci_low: float = 0.0
    sequence_ci_high: float = math.inf
    # For the report's plots, not the JSON: the ratio of every generation (or batch) -- the
    # values the CI is computed over -- and every variant's raw samples of this benchmark.
    group_ratios: tuple[tuple[int, float], ...] = field(default=(), compare=False)
    group_name: str = "generation"
    series: tuple[TimeSeries, ...] = field(default=(), compare=False)
    # what the per-variant values are (the estimator, over the samples the ratio uses, with
    # the --preempted policy applied) and the plain medians of the samples as measured
    value_estimator: str = VALUE_ESTIMATOR
    value_preempted: str = "keep"
    baseline_value_measured: float = math.nan
    variant_value_measured: float = math.nan
    # the level the interval was computed at, and how many comparisons share the run's
    # confidence (stats.family)
    confidence: float = 0.95
    family_size: int = 1
    # load that correcting preempted samples cannot repair (stats.overload)
    overload: OverloadCheck | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "n_groups": self.n_groups,
            "group": self.group_name,
            "n_pairs": self.n_pairs,
            "between_group_sd": _finite_or_none(self.between_group_sd),
            "baseline_spread": self.baseline_spread,
            "variant_spread": self.variant_spread,
            "extra_seconds_to_decide": self.extra_seconds_to_decide,
            "value_estimator": self.value_estimator,
            "value_preempted": self.value_preempted,
            "baseline_value_measured": _finite_or_none(self.baseline_value_measured),
            "variant_value_measured": _finite_or_none(self.variant_value_measured),
            "confidence": self.confidence,
            "family_size": self.family_size,
            "overload": self.overload.to_json() if self.overload is not None else None,
            "sequence_ci_low": _finite_or_none(self.sequence_ci_low) or None,
            "sequence_ci_high": _finite_or_none(self.sequence_ci_high),
        }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def analyse_time(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    settings: Settings,
    *,
    family: int = 1,
    order: Sequence[str] = (),
) -> LensAnalysis:
    """Every variant against the first. `family`: how many comparisons the run decides
    together; each interval is computed at the level that keeps them all at the run's
    confidence (stats.family). `order`: every variant of the experiment, in its order (the
    notes about them all are then worded alike whichever group is analysed)."""
    stored = _stored(benchmark, variants, data, settings, family, series=True)
    notes: list[Note] = []
    for name in variants:
        notes += noise_notes(benchmark, name, data.samples_of(name, WALL_NS), settings)
    notes += preemption_notes(benchmark, variants, data, stored.policy, order)
    comparisons = []
    for name in variants[1:]:
        compared = _compare_variant(stored, name, data.samples_of(name, WALL_NS))
        if compared is not None:
            comparisons.append(compared[0])
            notes += compared[1]
    measurements = tuple(
        own
        for name in variants
        if (own := own_time(benchmark, name, data, settings, stored.batch_blocks, stored.units))
        is not None
    )
    notes += measured_once_notes(benchmark, measurements)
    return LensAnalysis(
        comparisons=tuple(comparisons), notes=tuple(notes), measurements=measurements
    )


def time_figures(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    experiment: Experiment,
) -> LensAnalysis:
    """Every variant against the first, its figures alone (ratio, interval, verdict, values),
    the same to the bit as `analyse_time`'s: no details, notes or own times. A trend point
    needs only these; the forecast and the noise checks are most of the whole analysis's cost.
    The descriptor's `Figures.analysis` hook."""
    settings = experiment.settings
    stored = _stored(benchmark, variants, data, settings, run_family_size(experiment))
    comparisons = []
    for name in variants[1:]:
        decided = _decided(stored, name, data.samples_of(name, WALL_NS))
        if decided is not None:
            comparisons.append(decided.comparison)
    return LensAnalysis(comparisons=tuple(comparisons))


@dataclass(frozen=True)
class _Stored:
    """What every comparison of one benchmark shares, read once from the stored data."""

    benchmark: Benchmark
    settings: Settings
    family: int  # comparisons the run decides together (stats.family)
    comparisons: int  # of this benchmark: one sequence each for the stopping rule
    baseline_name: str
    baseline: list[Sample]  # every wall-time sample, warm-up included
    measured_baseline: list[Sample]
    batch_blocks: int | None  # commands: blocks per unit of the interval
    units: dict[int, int] | None  # generation -> server round, when forked from servers
    policy: preemption.Preemption
    elapsed_s: float
    series: tuple[TimeSeries, ...]  # the scatter plot's; empty where only figures are wanted
    shared_cpu_with: tuple[int, ...]  # other perflab runs on the measuring CPU (shared_cpu_of)


def _stored(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    settings: Settings,
    family: int,
    *,
    series: bool = False,
) -> _Stored:
    baseline = data.samples_of(variants[0], WALL_NS)
    measured_baseline = [s for s in baseline if not s.warmup]
    batch_blocks = None
    if benchmark.kind is BenchmarkKind.COMMAND:
        batch_blocks = command_units_of(data, len({s.block for s in measured_baseline}))
    return _Stored(
        benchmark=benchmark,
        settings=settings,
        family=family,
        comparisons=len(variants) - 1,
        baseline_name=variants[0],
        baseline=baseline,
        measured_baseline=measured_baseline,
        batch_blocks=batch_blocks,
        units=server_rounds_of(data),
        policy=preemption.Preemption(settings.preempted),
        elapsed_s=max((s.at_ns for s in data.samples), default=0) / 1e9,
        series=time_series(data.samples, variants) if series else (),
        shared_cpu_with=shared_cpu_of(data),
    )


def _group_name(batch_blocks: int | None, units: dict[int, int] | None) -> str:
    """What one unit of the interval is."""
    if batch_blocks is not None:
        return "batch"
    return "server round" if units else "generation"


@dataclass(frozen=True)
class _Decided:
    """One comparison decided: its figures (no details yet) and what they were read off."""

    comparison: Comparison
    basis: IntervalBasis
    sides: _Sides
    centres: VariantCentres


def _decided(stored: _Stored, name: str, samples: list[Sample]) -> _Decided | None:
    """One variant against the baseline, its figures alone; None when nothing was measured."""
    baseline, batch_blocks, units = stored.baseline, stored.batch_blocks, stored.units
    basis = interval_basis(
        baseline,
        samples,
        confidence=family_confidence(stored.settings.confidence, stored.family),
        policy=stored.policy,
        groups=SampleGroups(batch_blocks, units),
        shared_cpu_with=stored.shared_cpu_with,
    )
    if basis is None:
        return None
    kept = kept_pairs(baseline, samples, batch_blocks=batch_blocks, preemption=stored.policy)
    sides = _Sides(stored.measured_baseline, samples, kept, units, basis.pairs, basis.mean)
    centres = _centres(sides, trimmed=batch_blocks is not None)
    comparison = _time_comparison(stored, name, centres, basis.estimate, basis.check)
    return _Decided(comparison, basis, sides, centres)


def _compare_variant(
    stored: _Stored, name: str, samples: list[Sample]
) -> tuple[Comparison, list[Note]] | None:
    """One variant against the baseline with its details, and the notes on its per-process
    noise and overload; None when nothing was measured."""
    decided = _decided(stored, name, samples)
    if decided is None:
        return None
    estimate, check = decided.basis.estimate, decided.basis.check
    notes: list[Note] = []
    finding = noise.per_process_finding(estimate.between_group_sd, estimate.n_groups)
    if finding is not None and stored.benchmark.kind is BenchmarkKind.STATEMENT:
        notes.append(finding_note(stored.benchmark, name, finding))
    if check is not None and check.seen:
        notes.append(overload_note(stored.benchmark, stored.baseline_name, name, check))
    if _few_processes(stored, estimate):
        notes.append(_few_processes_note(stored.benchmark, name, estimate.n_groups))
    values = VariantValues.of(decided.centres, _spreads(decided.sides))
    details = _time_details(stored, decided.sides, estimate, values, check)
    return replace(decided.comparison, details=details), notes


def own_time(
    benchmark: Benchmark,
    variant: str,
    data: BenchmarkData,
    settings: Settings,
    batch_blocks: int | None,
    units: dict[int, int] | None,
) -> Measurement | None:
    """A variant's own time per iteration with its interval (over the same groups as a
    comparison's), and the plain figures of its measured samples (hyperfine's)."""
    samples = [s for s in data.samples_of(variant, WALL_NS) if not s.warmup]
    if not samples:
        return None
    policy = preemption.Preemption(settings.preempted)
    values = own_log_values(samples, batch_blocks=batch_blocks, preemption=policy)
    # the estimator of the ratio (`interval_basis`) and the table's columns: commands trim
    trimmed = batch_blocks is not None
    estimate = (trimmed_ratio if trimmed else estimate_ratio)(values, settings.confidence, units)
    times = np.array([s.per_iteration for s in samples], dtype=float)
    cpu = [s.cpu_ns / s.loops for s in samples if s.cpu_ns is not None]
    return Measurement(
        benchmark=benchmark.name,
        metric=TIME,
        variant=variant,
        value=estimate.ratio,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        unit="ns",
        n_groups=estimate.n_groups,
        group_name=_group_name(batch_blocks, units),
        mean=float(times.mean()),
        stddev=float(times.std(ddof=1)) if len(times) > 1 else math.nan,
        median=float(np.median(times)),
        min=float(times.min()),
        max=float(times.max()),
        cpu_mean=float(np.mean(cpu)) if cpu else None,
        estimator=estimator_name(estimate.n_groups, trimmed=trimmed),
        preempted=settings.preempted,
        times=tuple(float(t) for t in times),
        series=time_series(data.samples, [variant])[0],
        exit_codes=exit_codes_of(data, variant, samples),
    )


@dataclass(frozen=True)
class _Sides:
    """One comparison's samples: as measured, and as paired for its interval."""

    baseline: list[Sample]  # measured (not warm-up)
    variant: list[Sample]
    kept: list[tuple[int, Sample, Sample]]  # stats.paired.kept_pairs, the policy applied
    units: dict[int, int] | None
    pairs: list[PairedLogRatio]  # the log ratios the estimate is over
    mean: RatioEstimate  # the units' mean, around which the stopping rule's sequence lies


def _time_comparison(
    stored: _Stored,
    name: str,
    values: VariantCentres,
    estimate: RatioEstimate,
    check: OverloadCheck | None,
) -> Comparison:
    """The columns come from the samples the ratio uses, by the same estimator
    (stats.variant_values): raw medians next to a corrected ratio disagreed."""
    return comparison_from(
        estimate,
        Subject(stored.benchmark.name, TIME, stored.baseline_name, name),
        SideValues(values.baseline, values.variant, "ns"),
        equivalence_band=stored.settings.equivalence_band,
        # the bound rests on an assumed cost of preemption, or on too few processes: a claim
        # needs the whole (widened) interval beyond what processes of the same code differ by,
        # and none is `equivalent`: a difference far beyond the assumption is still a finding
        one_process=(check is not None and check.undecided) or _few_processes(stored, estimate),
    )


# A statement's interval over fewer worker generations than this rests on one degree of freedom
# for the spread between processes: a claim from it needs the whole interval beyond what
# processes of the same code differ by (stats.comparison), as a lens of one process per variant.
# Why: two generations that agree closely by chance say nothing of the spread between processes.
MIN_GENERATIONS_TO_DECIDE = 3


def _few_processes(stored: _Stored, estimate: RatioEstimate) -> bool:
    return (
        stored.benchmark.kind is BenchmarkKind.STATEMENT
        and 0 < estimate.n_groups < MIN_GENERATIONS_TO_DECIDE
    )


def _few_processes_note(benchmark: Benchmark, variant: str, n_groups: int) -> Note:
    return Note(
        severity=Severity.INFO,
        message=f"only {n_groups} worker generation{'s' if n_groups != 1 else ''} per variant: "
        f"with fewer than {MIN_GENERATIONS_TO_DECIDE} the verdict is faster or slower only "
        f"beyond ±{ONE_PROCESS_ALLOWANCE:.0%} (what processes of the same code differ by), "
        "never equivalent",
        hint="a larger --budget (or --min-generations 3) gives the generations a verdict needs",
        benchmark=benchmark.name,
        variant=variant,
        metric=TIME,
    )


def _centres(sides: _Sides, *, trimmed: bool) -> VariantCentres:
    """Each side's value, by the ratio's estimator over the pairs it uses."""
    if _all_excluded(sides):
        # every pair excluded (--preempted exclude): no ratio, the samples as measured
        return VariantCentres(
            float(np.median([s.per_iteration for s in sides.baseline])),
            float(np.median([s.per_iteration for s in sides.variant if not s.warmup])),
            estimator="median as measured",
        )
    return paired_centres(sides.kept, sides.units, trimmed=trimmed)


def _spreads(sides: _Sides) -> tuple[float, float]:
    """The baseline's and the variant's spread, over the samples their values are from."""
    if _all_excluded(sides):
        return (
            relative_spread([s.per_iteration for s in sides.baseline]),
            relative_spread([s.per_iteration for s in sides.variant if not s.warmup]),
        )
    return paired_spreads(sides.kept)


def _all_excluded(sides: _Sides) -> bool:
    return not sides.kept and bool(sides.baseline) and any(not s.warmup for s in sides.variant)


def _time_details(
    stored: _Stored,
    sides: _Sides,
    estimate: RatioEstimate,
    values: VariantValues,
    check: OverloadCheck | None,
) -> TimeDetails:
    settings = stored.settings
    base_values = [s.per_iteration for s in sides.baseline]
    variant_values = [s.per_iteration for s in sides.variant if not s.warmup]
    # one sequence per comparison the stopping rule watched, as it did; never narrower than
    # the interval reported (which an overload check may have widened)
    alpha = sequence_alpha(settings.confidence, stored.comparisons, stored.family)
    low, high = sequence_interval(sides.mean, alpha)
    overloaded = check is not None and check.seen
    return TimeDetails(
        n_groups=estimate.n_groups,
        n_pairs=estimate.n_pairs,
        between_group_sd=estimate.between_group_sd,
        baseline_spread=values.baseline_spread,
        variant_spread=values.variant_spread,
        # under load, measuring longer narrows the unpreempted pairs' interval, not the
        # widening for what the load put in (stats.overload)
        extra_seconds_to_decide=seconds_to_decide_under_load(
            check, settings.equivalence_band, stored.elapsed_s
        )
        if check is not None and overloaded
        else seconds_to_decide(estimate, settings.equivalence_band, stored.elapsed_s),
        sequence_ci_low=min(low, estimate.ci_low),
        sequence_ci_high=max(high, estimate.ci_high),
        group_ratios=tuple(
            (group, math.exp(mean)) for group, mean in unit_means(sides.pairs, sides.units).items()
        ),
        group_name=_group_name(stored.batch_blocks, sides.units),
        series=stored.series,
        value_estimator=values.estimator,
        value_preempted=settings.preempted,
        baseline_value_measured=float(np.median(base_values)) if base_values else math.nan,
        variant_value_measured=float(np.median(variant_values)) if variant_values else math.nan,
        confidence=estimate.confidence,
        family_size=stored.family,
        overload=check,
    )
