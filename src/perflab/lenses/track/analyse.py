"""The track lens's analysis: each variant's values against the baseline's. A value every
process returns the same (a count, a size) compares exactly: its ratio, with an interval of that
ratio alone; one that varies from process to process gets the paired interval every lens uses
(the log ratio per generation, a t interval over generations). Either way the verdict is the
rule every lens follows, a larger value `slower` in its words ("higher" in the report)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from perflab.lenses.track.metric import TRACK
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.model import Benchmark, Comparison, Note, Sample, Severity
from perflab.records.settings import Settings
from perflab.stats.comparison import RatioInterval, SideValues, Subject, comparison_from
from perflab.stats.paired import RatioEstimate, estimate_ratio, pair_samples

VALUE = "value"  # the sample: the value one call returned, in the process's unit
UNIT_ARTIFACT = "track_unit"  # the unit the set-up named (`track_unit`), per variant


@dataclass(frozen=True)
class TrackDetails:
    """The facts behind one comparison of tracked values (the JSON export's `details`)."""

    deterministic: bool  # every process of each variant returned one value
    n_values: int  # values read per variant (one per process)
    baseline_values: tuple[float, ...]
    variant_values: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "deterministic": self.deterministic,
            "n_values": self.n_values,
            "values": {
                "baseline": list(self.baseline_values),
                "variant": list(self.variant_values),
            },
        }


def analyse_track(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: each variant's values against the baseline's."""
    base = _values(data, variants[0])
    unit = _unit(data, variants[0])
    comparisons: list[Comparison] = []
    notes: list[Note] = []
    for name in variants[1:]:
        side = _values(data, name)
        if not base or not side:
            continue
        ratio = _ratio(base, side, settings.confidence)
        if ratio is None:
            notes.append(_no_ratio_note(benchmark, name, base, side))
            continue
        comparisons.append(
            comparison_from(
                ratio,
                Subject(benchmark.name, TRACK, variants[0], name),
                SideValues(_centre(base), _centre(side), unit),
                equivalence_band=settings.equivalence_band,
                details=TrackDetails(
                    deterministic=_constant(base) and _constant(side),
                    n_values=min(len(base), len(side)),
                    baseline_values=tuple(_numbers(base)),
                    variant_values=tuple(_numbers(side)),
                ),
            )
        )
    return LensAnalysis(tuple(comparisons), tuple(notes))


def _values(data: BenchmarkData, variant: str) -> list[Sample]:
    return [s for s in data.samples_of(variant, VALUE) if not s.warmup]


def _numbers(samples: Sequence[Sample]) -> list[float]:
    return [s.value for s in samples]


def _centre(samples: Sequence[Sample]) -> float:
    """The value shown for a side: the geometric mean, whose ratio is the one decided (the
    mean log ratio over generations, one value each); the mean where a value is not positive."""
    numbers = _numbers(samples)
    return statistics.geometric_mean(numbers) if min(numbers) > 0 else statistics.fmean(numbers)


def _constant(samples: Sequence[Sample]) -> bool:
    return len({s.value for s in samples}) == 1


def _unit(data: BenchmarkData, variant: str) -> str:
    named = data.artifacts_of(variant, UNIT_ARTIFACT)
    return named[0].content if named else ""


def _ratio(
    base: Sequence[Sample], side: Sequence[Sample], confidence: float
) -> RatioEstimate | RatioInterval | None:
    """variant/baseline with its interval: exact where neither varies, paired by generation
    where one does; None where a ratio means nothing (a value at or below zero)."""
    if _constant(base) and _constant(side):
        before, after = base[0].value, side[0].value
        if before == after:
            return (1.0, 1.0, 1.0)
        if before <= 0 or after <= 0:
            return None
        return (after / before, after / before, after / before)
    if min(_numbers(base)) <= 0 or min(_numbers(side)) <= 0:
        return None
    return estimate_ratio(pair_samples(base, side), confidence)


def _no_ratio_note(
    benchmark: Benchmark, variant: str, base: Sequence[Sample], side: Sequence[Sample]
) -> Note:
    """Why there is no verdict. A warning where every process of each returned one value and
    the two differ: the change is certain (an error that was 0 and is not), and an info note
    would hide it."""
    shown = ", ".join(f"{v:g}" for v in _numbers(base)[:4])
    other = ", ".join(f"{v:g}" for v in _numbers(side)[:4])
    if _constant(base) and _constant(side):
        return Note(
            Severity.WARNING,
            f"the tracked value changed from {base[0].value:g} to {side[0].value:g} in "
            f"{variant!r}, in every process of each: at zero or below a ratio means nothing, "
            "so no verdict",
            benchmark=benchmark.name,
            variant=variant,
            metric=TRACK,
        )
    return Note(
        Severity.INFO,
        f"the tracked value is zero or negative in {variant!r} or the baseline ({other} against "
        f"{shown}): a ratio means nothing there, so no verdict",
        benchmark=benchmark.name,
        variant=variant,
        metric=TRACK,
    )
