"""Stored peak-memory samples (measure/peak_memory/sessions.py) -> per measure, each variant
against the baseline: the rss lens's analysis, and the memory lens's footprint. Pure, and it
knows no lens: each files it under its own metric and gives its own words; here, not in a lens,
since both lenses read it and no lens imports another."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.records.kinds import BenchmarkKind, Metric, Verdict
from perflab.records.model import (
    Benchmark,
    BenchmarkData,
    Comparison,
    Measurement,
    Note,
    Sample,
    Severity,
    Withhold,
)
from perflab.records.settings import Settings
from perflab.stats.comparison import SideValues, Subject, comparison_from, withhold_verdict
from perflab.stats.paired import RatioEstimate, estimate_ratio, own_log_values, pair_samples
from perflab.stats.summary import mean_per_iteration
from perflab.stats.variant_values import VALUE_ESTIMATOR

MAXRSS_KB = "maxrss_kb"  # peak resident set size of the process, kB (per sample, not per loop)
PEAK_ALLOC_BYTES = "peak_alloc_bytes"  # peak allocated while the loop ran (per sample)
NET_BLOCKS = "net_blocks"  # blocks left allocated after the loop (per iteration: value / loops)
# commands: wait4's peak RSS of `true` run the same way. The kernel keeps a process's peak RSS
# across exec, so a command's reads at least what the launcher had when it forked it.
FLOOR_KB = "floor_kb"
FLOOR_MARGIN = 1.05  # a peak within 5% of the floor may be the launcher's, not the command's
UNITS = {MAXRSS_KB: "kB", PEAK_ALLOC_BYTES: "B"}
COMPARED = (MAXRSS_KB, PEAK_ALLOC_BYTES)  # peak RSS first: the peak allocated's rule reads it
# memory measured otherwise (peak RSS's change, or the bytes one iteration brings into D1) more
# than TRACEMALLOC_BLIND times tracemalloc's larger peak: it was allocated outside Python's
# allocator (a native library's own: tensors, arrays), which tracemalloc does not see
TRACEMALLOC_BLIND = 16.0
# the reason such a peak allocated gives for no verdict at all (the memory lens's too)
NOT_THE_MEMORY_CHANGE = Withhold("tracemalloc-blind")


@dataclass(frozen=True)
class RssDetails:
    """The facts behind one peak-memory comparison (the JSON export's `details`): which measure,
    groups, and net allocated blocks per iteration."""

    measure: str
    n_groups: int
    baseline_net_blocks_per_iteration: float | None
    variant_net_blocks_per_iteration: float | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rss_measure": self.measure, "n_groups": self.n_groups}
        if self.baseline_net_blocks_per_iteration is not None:
            out["net_blocks_per_iteration"] = {
                "baseline": self.baseline_net_blocks_per_iteration,
                "variant": self.variant_net_blocks_per_iteration,
            }
        return out


_MEASURES = {
    MAXRSS_KB: "peak resident set size of the process",
    PEAK_ALLOC_BYTES: "peak memory allocated while the loop ran (tracemalloc)",
}


def _measured_per_iteration(samples: Sequence[Sample]) -> float | None:
    """The per-iteration value, None when nothing was measured."""
    value = mean_per_iteration(samples)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class PeakMemoryAnalysis:
    """The comparisons and notes, and per variant its note that tracemalloc's peak is not the
    memory change (one of the notes): a lens with better evidence says it instead."""

    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[Note, ...] = ()
    blind_notes: Mapping[str, Note] = field(default_factory=dict)
    measurements: tuple[Measurement, ...] = ()  # a lone variant's own peak RSS


def analyse_peak_memory(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    settings: Settings,
    *,
    metric: Metric,
    blind_hint: str,
) -> PeakMemoryAnalysis:
    """From stored data only: per measure, each variant against the baseline, filed under
    `metric`; `blind_hint`: the lens's hint where tracemalloc's peak is not the memory change
    (where to read the footprint instead)."""
    comparisons: list[Comparison] = []
    notes: list[Note] = []
    blind_notes: dict[str, Note] = {}
    floor_kb = max((s.value for s in data.samples if s.name == FLOOR_KB), default=None)
    peak_rss: dict[str, Comparison] = {}  # variant -> its peak RSS comparison
    for measure in COMPARED:
        sides = {name: _side(data, name, measure) for name in variants}
        base = sides[variants[0]]
        if base is None:
            continue
        for side in (sides[name] for name in variants[1:]):
            if side is None:
                continue
            estimate = estimate_ratio(pair_samples(base.samples, side.samples), settings.confidence)
            if math.isnan(estimate.ratio):
                notes += _no_ratio_notes(benchmark, measure, base, side, metric)
                continue
            notes += _floor_notes(benchmark, measure, base, side, floor_kb, metric)
            comparison = _rss_comparison(
                benchmark, measure, (base, side), estimate, settings, metric
            )
            if measure == MAXRSS_KB:
                peak_rss[side.name] = comparison
            blind = tracemalloc_blind(comparison, peak_rss.get(side.name))
            if blind is not None:
                comparison = withhold_verdict(comparison, NOT_THE_MEMORY_CHANGE)
                blind_notes[side.name] = _blind_note(
                    benchmark, side.name, blind, metric, blind_hint
                )
                notes.append(blind_notes[side.name])
            comparisons.append(comparison)
    # one variant has nothing to compare with: its own peak RSS is the answer
    alone = own_peak_rss(benchmark, variants[0], data, settings, metric=metric)
    measurements = (alone,) if len(variants) == 1 and alone is not None else ()
    return PeakMemoryAnalysis(tuple(comparisons), tuple(notes), blind_notes, measurements)


def own_peak_rss(
    benchmark: Benchmark,
    variant: str,
    data: BenchmarkData,
    settings: Settings,
    *,
    metric: Metric,
) -> Measurement | None:
    """A variant's own peak RSS with its interval, over the same groups as a comparison's
    (a geometric mean of group medians), and the plain figures of its samples."""
    samples = [s for s in data.samples_of(variant, MAXRSS_KB) if not s.warmup]
    estimate = estimate_ratio(own_log_values(samples), settings.confidence)
    if not samples or math.isnan(estimate.ratio):
        return None
    peaks_kb = sorted(s.per_iteration for s in samples)
    return Measurement(
        benchmark=benchmark.name,
        metric=metric,
        variant=variant,
        value=estimate.ratio,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        unit=UNITS[MAXRSS_KB],
        n_groups=estimate.n_groups,
        # a command's every run is its own process; a statement's generation is one worker
        group_name="run" if benchmark.kind is BenchmarkKind.COMMAND else "generation",
        mean=statistics.fmean(peaks_kb),
        stddev=statistics.stdev(peaks_kb) if len(peaks_kb) > 1 else math.nan,
        median=statistics.median(peaks_kb),
        min=peaks_kb[0],
        max=peaks_kb[-1],
        estimator=VALUE_ESTIMATOR,
        times=tuple(s.per_iteration for s in samples),
    )


def tracemalloc_blind(peak_allocated: Comparison, peak_rss: Comparison | None) -> str | None:
    """Why the peak allocated (tracemalloc) is not the memory change, when it is not: it sees
    only memory allocated through Python's allocator, and peak RSS differed (a verdict) by far
    more than that (torch's tensors of 16 and 32 MB: peak allocated 264 B and 344 B). None when
    it may be the change."""
    if peak_allocated.event != PEAK_ALLOC_BYTES or peak_rss is None:
        return None
    if peak_rss.verdict not in (Verdict.FASTER, Verdict.SLOWER):
        return None
    before, after = peak_allocated.baseline_value, peak_allocated.variant_value
    rss_change_bytes = abs(peak_rss.variant_value - peak_rss.baseline_value) * 1024
    if rss_change_bytes <= TRACEMALLOC_BLIND * max(before, after, 1.0):
        return None
    return (
        f"peak allocated (tracemalloc) {before:,.0f} B → {after:,.0f} B is not the memory "
        f"change: it counts only what is allocated through Python's allocator, while peak RSS "
        f"went {peak_rss.baseline_value:,.0f} kB → {peak_rss.variant_value:,.0f} kB; memory a "
        "native library allocates itself (tensors, arrays) is not in it"
    )


def _blind_note(benchmark: Benchmark, variant: str, blind: str, metric: Metric, hint: str) -> Note:
    return Note(
        Severity.INFO,
        blind,
        hint=hint,
        benchmark=benchmark.name,
        variant=variant,
        metric=metric,
    )


@dataclass(frozen=True)
class _MeasuredVariant:
    """One variant's stored samples of one measure, and their per-iteration values."""

    name: str
    samples: list[Sample]
    value: float
    net_blocks_per_iteration: float | None


def _side(data: BenchmarkData, variant: str, measure: str) -> _MeasuredVariant | None:
    samples = data.samples_of(variant, measure)
    value = _measured_per_iteration(samples)
    if value is None:
        return None
    blocks = _measured_per_iteration(data.samples_of(variant, NET_BLOCKS))
    return _MeasuredVariant(variant, samples, value, blocks)


def _no_ratio_notes(
    benchmark: Benchmark,
    measure: str,
    base: _MeasuredVariant,
    side: _MeasuredVariant,
    metric: Metric,
) -> list[Note]:
    if measure == PEAK_ALLOC_BYTES and base.value == side.value == 0:
        return []  # the loop allocates nothing in either: nothing to compare
    return [
        Note(
            Severity.INFO,
            f"{_MEASURES[measure]} is zero in {side.name!r} or the baseline: no ratio",
            benchmark=benchmark.name,
            variant=side.name,
            metric=metric,
        )
    ]


def _floor_notes(
    benchmark: Benchmark,
    measure: str,
    base: _MeasuredVariant,
    side: _MeasuredVariant,
    floor_kb: float | None,
    metric: Metric,
) -> list[Note]:
    """A command's peak RSS at the launcher's floor: a smaller peak would read the same."""
    smaller = min(base.value, side.value)
    if measure != MAXRSS_KB or floor_kb is None or smaller > floor_kb * FLOOR_MARGIN:
        return []
    return [
        Note(
            Severity.WARNING,
            f"the peak RSS of {side.name!r} or the baseline ({smaller:,.0f}"
            f" kB) is not above what `true` reads started the same way "
            f"({floor_kb:,.0f} kB): the kernel keeps the launching process's peak "
            "across exec, so a smaller peak cannot be seen",
            hint="the ratio then understates the difference; below that floor, "
            "measure the program's memory as a statement (--stmt)",
            benchmark=benchmark.name,
            variant=side.name,
            metric=metric,
        )
    ]


def _rss_comparison(
    benchmark: Benchmark,
    measure: str,
    sides: tuple[_MeasuredVariant, _MeasuredVariant],
    estimate: RatioEstimate,
    settings: Settings,
    metric: Metric,
) -> Comparison:
    base, side = sides
    return comparison_from(
        estimate,
        Subject(benchmark.name, metric, base.name, side.name),
        SideValues(base.value, side.value, UNITS[measure]),
        equivalence_band=settings.equivalence_band,
        event=measure,
        details=RssDetails(
            measure=_MEASURES[measure],
            n_groups=estimate.n_groups,
            baseline_net_blocks_per_iteration=base.net_blocks_per_iteration,
            variant_net_blocks_per_iteration=side.net_blocks_per_iteration,
        ),
    )
