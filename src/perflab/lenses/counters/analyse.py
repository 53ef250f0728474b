"""The counters lens's analysis, from stored data only: the per-event comparisons, the derived
metrics, AVX-512 findings and the notes that explain them, with which events were available
(availability.py). Pure: no processes."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.lenses.counters.availability import (
    never_counted,
    stored_availability,
    stored_probe,
    unavailable_note,
    user_only_note,
)
from perflab.lenses.counters.avx512 import AVX512
from perflab.lenses.counters.confidence import event_confidence
from perflab.lenses.counters.findings import (
    Avx512Use,
    CounterFindings,
    VariantMetric,
)
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.options import requested_events
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import (
    Benchmark,
    Comparison,
    Experiment,
    Note,
    Sample,
    Severity,
    Withhold,
)
from perflab.stats.comparison import RatioInterval, SideValues, Subject, comparison_from
from perflab.stats.family import run_family_size
from perflab.stats.paired import RatioEstimate, estimate_ratio, pair_samples
from perflab.stats.summary import mean_per_iteration
from perflab.tool_output.perf_stat import Availability, derived_metrics

# a count event claims a difference only where a sample holds at least this many events on one
# side: a handful per sample (context switches from the worker's handshake racing the counter's
# switch) is noise of its own that the interval does not see
COUNT_FLOOR = 100
# the reason a comparison below it gives for claiming no difference; `equivalent` stands (zero
# on both sides is as equal as counts get)
FEW_EVENTS = Withhold("below-count-floor", differences_only=True)


@dataclass(frozen=True)
class CounterDetails:
    """The counters lens's facts behind one event's comparison (the JSON export's `details`):
    availability, multiplexing, user-only counting and the interval's family."""

    availability: Availability
    min_running_fraction: float | None
    user_only: bool
    n_groups: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    # a count event with fewer than COUNT_FLOOR events per sample on both sides: shown, no claim
    below_floor: bool = False
    # the level of this event's interval, and how many events share the run's `confidence`
    confidence: float | None = None
    family_events: int = 1
    family_comparisons: int = 1  # benchmarks x variant pairs: the family is events x these

    def to_json(self) -> dict[str, Any]:
        return {
            "availability": self.availability.value,
            "min_running_fraction": self.min_running_fraction,
            "user_only": self.user_only,
            "n_groups": self.n_groups,
            "below_floor": self.below_floor,
            "confidence": self.confidence,
            "family_events": self.family_events,
            "family_comparisons": self.family_comparisons,
            **self.extra,
        }


def analyse_counters(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, experiment: Experiment
) -> LensAnalysis:
    """The counters lens's analysis of a benchmark's stored counts: each counted event of each
    variant compared with the baseline's (one family's confidence), with notes on events
    withheld, counted in user mode only or never counted, and on AVX-512 use."""
    settings = experiment.settings
    baseline = variants[0]
    unavailable, facts = stored_probe(data, baseline)
    availability = stored_availability(data, variants)
    missing = {u.event for u in unavailable}
    measured = [e for e in requested_events(settings) if e not in missing]
    counted = [e for e in measured if data.samples_of(baseline, e)]
    pairs = run_family_size(experiment)
    family = Family(event_confidence(settings.confidence, len(counted), pairs), len(counted), pairs)
    shared = _EventBasis(benchmark, data, settings.equivalence_band, family)
    comparisons: list[Comparison] = []
    notes: list[Note] = []
    for event in measured:
        if event not in counted:
            unavailable.append(never_counted(event, availability.get(event, {}), facts))
            continue
        states = availability.get(event, {})
        for other in variants[1:]:
            comparison = _event_comparison(shared, event, (baseline, other), states)
            comparisons.append(comparison)
            if comparison.withheld is not None:
                notes.append(_withheld_note(benchmark.name, comparison))
        if states.get("user_only"):
            notes.append(user_only_note(benchmark.name, event))
    avx = _avx_use(variants, data)
    if avx:
        notes += _avx_notes(benchmark, avx)
    notes += [unavailable_note(benchmark.name, item) for item in unavailable]
    findings = CounterFindings(
        benchmark.name, tuple(unavailable), _derived(variants, data), tuple(avx)
    )
    return LensAnalysis(tuple(comparisons), tuple(notes), findings)


@dataclass(frozen=True)
class Family:
    """The events a variant's comparison decides together, and each one's interval level."""

    confidence: float
    n_events: int
    n_comparisons: int = 1  # benchmarks x variant pairs of the run, each with these events


@dataclass(frozen=True)
class _EventBasis:
    """What every event comparison of one benchmark is made with."""

    benchmark: Benchmark
    data: BenchmarkData
    equivalence_band: float
    family: Family


def _event_comparison(
    shared: _EventBasis, event: str, sides: tuple[str, str], states: Mapping[str, Any]
) -> Comparison:
    """The comparison, with a difference claimed on too few events withheld."""
    benchmark, data, family = shared.benchmark, shared.data, shared.family
    baseline, other = sides
    base = data.samples_of(baseline, event)
    variant_samples = data.samples_of(other, event)
    batch = None if benchmark.kind is BenchmarkKind.STATEMENT else 1
    interval, groups = _event_interval(base, variant_samples, batch, family)
    unit = "ns" if event in ("task-clock", "cpu-clock") else "count"
    few = (
        unit == "count"
        and max(_median_per_sample(base), _median_per_sample(variant_samples)) < COUNT_FLOOR
    )
    return comparison_from(
        interval,
        Subject(benchmark.name, COUNTERS, baseline, other),
        SideValues(mean_per_iteration(base), mean_per_iteration(variant_samples), unit),
        equivalence_band=shared.equivalence_band,
        event=event,
        details=CounterDetails(
            availability=Availability(states.get("availability", Availability.COUNTED)),
            min_running_fraction=states.get("min_running_fraction"),
            user_only=bool(states.get("user_only", False)),
            n_groups=groups,
            below_floor=few,
            confidence=family.confidence,
            family_events=family.n_events,
            family_comparisons=family.n_comparisons,
        ),
        withhold=FEW_EVENTS if few else None,
    )


def _event_interval(
    base: Sequence[Sample], variant: Sequence[Sample], batch: int | None, family: Family
) -> tuple[RatioEstimate | RatioInterval, int]:
    """The event's ratio with its interval, and over how many groups."""
    if all(s.value == 0 for s in [*base, *variant] if not s.warmup):
        # no pair has a log ratio, but "zero in both" is as equivalent as it gets
        return (1.0, 1.0, 1.0), len({s.generation for s in base})
    estimate = estimate_ratio(pair_samples(base, variant, batch_blocks=batch), family.confidence)
    return estimate, estimate.n_groups


def _withheld_note(benchmark: str, comparison: Comparison) -> Note:
    withheld = comparison.interval_verdict or comparison.verdict
    return Note(
        severity=Severity.INFO,
        message=f"{comparison.event}: `{comparison.variant}` against `{comparison.baseline}` "
        f"{comparison.ratio:.3f} [{comparison.ci_low:.3f}, {comparison.ci_high:.3f}] would "
        f"read `{withheld.value}`, but a sample counted fewer than {COUNT_FLOOR} of them on "
        "either side: a few stray events decide such a ratio, so it is not claimed",
        hint="a difference in this event shows as many events per sample; "
        "--sample-ms makes samples longer",
        benchmark=benchmark,
        variant=comparison.variant,
        metric=COUNTERS,
    )


def _median_per_sample(samples: Sequence[Sample]) -> float:
    """The median number of events one measured sample counted (not per iteration)."""
    values = [s.value for s in samples if not s.warmup]
    return float(statistics.median(values)) if values else 0.0


def _derived(variants: Sequence[str], data: BenchmarkData) -> tuple[VariantMetric, ...]:
    out = []
    for variant in variants:
        totals: dict[str, float] = {}
        for sample in data.samples_of(variant):
            if not sample.warmup:
                totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
        out += [VariantMetric(variant, metric) for metric in derived_metrics(totals)]
    return tuple(out)


def _avx_use(variants: Sequence[str], data: BenchmarkData) -> list[Avx512Use]:
    """Each variant's AVX-512 tallies, its processes' together (none where it stored none)."""
    out = []
    for variant in variants:
        tallies = [json.loads(a.content) for a in data.artifacts_of(variant, AVX512)]
        if not tallies:
            continue
        out.append(
            Avx512Use(
                variant,
                supported=all(t["supported"] for t in tallies),
                samples=sum(t["samples"] for t in tallies),
                samples_with_avx512=sum(t["with_avx512"] for t in tallies),
                control_samples=sum(t["control_samples"] for t in tallies),
                control_with_avx512=sum(t["control_with_avx512"] for t in tallies),
            )
        )
    return out


def _avx_notes(benchmark: Benchmark, summary: Sequence[Avx512Use]) -> list[Note]:
    if not all(s.supported for s in summary):
        return []
    users = [s.variant for s in summary if s.executed_avx512]
    if not users:
        return [
            Note(
                Severity.INFO,
                "no variant executed AVX-512 code in the measured region (/proc/PID/arch_status)",
                benchmark=benchmark.name,
                metric=COUNTERS,
            )
        ]
    if all(s.attributable for s in summary):
        return [
            Note(
                Severity.INFO,
                "executed AVX-512 code in the measured region: " + ", ".join(users),
                hint="AVX-512 can lower the core clock (licence levels); compare with "
                "core_power.lvl2_turbo_license where the CPU has it",
                benchmark=benchmark.name,
                metric=COUNTERS,
            )
        ]
    return [
        Note(
            Severity.INFO,
            "AVX-512 register state was live in " + ", ".join(users) + ", but also around the "
            "empty-loop control, so it cannot be attributed to the statement (glibc's EVEX string "
            "functions and the worker's own I/O use zmm16-31 on this CPU)",
            benchmark=benchmark.name,
            metric=COUNTERS,
        )
    ]
