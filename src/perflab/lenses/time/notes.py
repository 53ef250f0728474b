"""The time lens's notes on what may have spoiled the measuring: noise in a variant's samples
(drift, outliers, two modes, CPU migration), the share of the measuring other processes took
(preemption), overload, and a variant measured only once."""

from __future__ import annotations

from collections.abc import Sequence

from perflab.lenses.time.artifacts import WALL_NS
from perflab.lenses.time.metric import TIME
from perflab.measure.lens import BenchmarkData
from perflab.records.model import Benchmark, Measurement, Note, Sample, Severity
from perflab.records.settings import Settings
from perflab.stats import noise, preemption
from perflab.stats.overload import OverloadCheck


def overload_note(benchmark: Benchmark, baseline: str, variant: str, check: OverloadCheck) -> Note:
    """The warning that the measuring CPU was overloaded while `variant` was measured, with how to
    free it."""
    return Note(
        severity=Severity.WARNING,
        message=check.message(baseline, variant),
        hint="give the measuring CPU to perflab alone: close what else runs on it, or pin "
        "the run to a CPU nothing else uses (--cpu N); perflab doctor shows the load",
        benchmark=benchmark.name,
        variant=variant,
        metric=TIME,
    )


def noise_notes(
    benchmark: Benchmark, variant: str, samples: list[Sample], settings: Settings
) -> list[Note]:
    """Notes on the signs of noise in one variant's samples (drift, outliers, bimodality,
    migration)."""
    measured = [s for s in samples if not s.warmup]
    if not measured:
        return []
    per_iteration = [s.per_iteration for s in measured]
    findings = [
        noise.drift_finding([s.at_ns for s in measured], per_iteration),
        noise.outlier_finding(per_iteration),
        noise.bimodality_finding(per_iteration),
        noise.migration_finding([s.cpu for s in measured], _pinned_cpu(settings, measured)),
    ]
    return [finding_note(benchmark, variant, f) for f in findings if f is not None]


# Other processes taking this share of the measuring CPU make the run's figures "under load".
LOADED_SHARE = 0.10


def preemption_notes(
    benchmark: Benchmark,
    variants: Sequence[str],
    data: BenchmarkData,
    policy: preemption.Preemption,
    order: Sequence[str] = (),
) -> list[Note]:
    """How much of the measuring other processes took (from the samples' own accounting), and
    from which variants' samples: one note for the benchmark, over every variant measured, so
    that a design analysed in several groups (a stack's steps) says it once: in one wording,
    the experiment's `order` (else the group's, its baseline first), so the repeats are equal
    notes and said once."""
    samples = [s for s in data.samples if s.name == WALL_NS]
    if not preemption.has_accounting(samples):
        return []
    measured = list(dict.fromkeys(s.variant for s in samples))
    if order:
        everyone = sorted(measured, key=[*order, *measured].index)
    else:  # the group's order (its baseline first) when it is every variant; else the samples'
        everyone = list(variants) if set(measured) <= set(variants) else measured
    summary = preemption.summarise_preemption(samples, everyone, policy)
    if summary.n_preempted == 0 and summary.lost_share < 0.01:
        return []
    loaded = summary.lost_share >= LOADED_SHARE
    shares = []
    for name in everyone:
        own = [s for s in samples if s.variant == name]
        shares.append(
            f"{name} {preemption.summarise_preemption(own, [name], policy).lost_share:.0%}"
        )
    return [
        Note(
            severity=Severity.WARNING if loaded else Severity.INFO,
            message=summary.message(policy)
            + (f" (of each variant's samples: {', '.join(shares)})" if len(everyone) > 1 else ""),
            hint="the machine was busy: close what else runs, or measure longer (--budget); "
            "perflab doctor shows the current load"
            if loaded
            else None,
            benchmark=benchmark.name,
            metric=TIME,
        )
    ]


def _pinned_cpu(settings: Settings, samples: list[Sample]) -> int | None:
    """The CPU the run was pinned to: the setting, or (auto) the one most samples ran on."""
    if not settings.pin:
        return None
    if settings.cpu is not None:
        return settings.cpu
    cpus = [s.cpu for s in samples if s.cpu is not None]
    return max(set(cpus), key=cpus.count) if cpus else None


# Findings that say the ratio itself may be off; the others describe the per-variant times.
_WARNING_KINDS = frozenset(
    {noise.NoiseKind.DRIFT, noise.NoiseKind.MIGRATION, noise.NoiseKind.PER_PROCESS}
)


def finding_note(benchmark: Benchmark, variant: str, finding: noise.NoiseFinding) -> Note:
    return Note(
        severity=Severity.WARNING if finding.kind in _WARNING_KINDS else Severity.INFO,
        message=finding.message,
        hint=finding.hint,
        benchmark=benchmark.name,
        variant=variant,
        metric=TIME,
    )


def measured_once_notes(benchmark: Benchmark, measurements: Sequence[Measurement]) -> list[Note]:
    """A variant whose own time has no interval, since it was measured once (--runs 1)."""
    return [
        Note(
            severity=Severity.WARNING,
            message=f"`{own.variant}` was measured once (--runs 1): its time is shown without "
            "an interval, which needs two runs or more, so nothing says how much it varies",
            hint="--runs 2 or more (or no --runs: the budget and the precision decide) gives "
            "an interval",
            benchmark=benchmark.name,
            variant=own.variant,
            metric=TIME,
        )
        for own in measurements
        if own.n_groups < 2
    ]
