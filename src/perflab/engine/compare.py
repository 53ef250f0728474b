"""store -> analyse: two stored runs compared variant by variant (measured apart)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from perflab.engine.analyse import merge_top_level, with_sections
from perflab.lenses.registry import lens_for
from perflab.measure.lens import FAILED_ARTIFACT, BenchmarkData
from perflab.records.errors import ConfigError
from perflab.records.model import (
    Benchmark,
    Comparison,
    Experiment,
    Metric,
    Note,
    Sample,
    Severity,
    Variant,
)
from perflab.records.results import RunResult
from perflab.store import StoredRun


def compare_runs(baseline: StoredRun, candidate: StoredRun) -> RunResult:
    """Compare two stored runs variant by variant: for every variant name and benchmark present in
    both, the candidate run's measurements against the baseline run's.

    Samples of two runs were not interleaved, so machine drift between the runs is not cancelled;
    the result says so. Time samples are matched by generation, and the CI is still computed over
    generations."""
    shared = _shared(baseline, candidate)
    comparisons: list[Comparison] = []
    notes = _cross_run_notes(baseline, candidate)
    top_level: dict[str, Any] = {}
    compared_samples: list[Sample] = []
    experiment = _each_variant_against_itself(baseline, candidate, shared)
    for variant_name in shared.variants:
        names = list(_labels(baseline, candidate, variant_name))
        for metric in shared.metrics:
            lens = lens_for(metric)
            for benchmark in shared.benchmarks:
                data = _relabelled(baseline, names[0], variant_name, benchmark.name, metric)
                data2 = _relabelled(candidate, names[1], variant_name, benchmark.name, metric)
                merged = BenchmarkData(
                    samples=data.samples + data2.samples, artifacts=data.artifacts + data2.artifacts
                )
                compared_samples += merged.samples
                if not data.samples and not data.artifacts:
                    continue
                if _failed_in(data) or _failed_in(data2):  # what it measured compares with nothing
                    continue
                analysis = lens.analyse(benchmark, names, merged, experiment)
                comparisons += analysis.comparisons
                notes += analysis.notes
                merge_top_level(top_level, analysis.top_level)
    return with_sections(
        RunResult(
            run_id=candidate.run_id,
            status=candidate.status,
            created_at=candidate.created_at,
            experiment=candidate.experiment,
            machine=dict(candidate.machine),
            comparisons=tuple(comparisons),
            notes=tuple(notes),
            variant_info={k: dict(v) for k, v in candidate.variant_info.items()},
            differences=(f"runs {baseline.run_id} and {candidate.run_id}, measured apart",),
            top_level=top_level,
            cross_run=True,
            baseline_run_id=baseline.run_id,
            samples=tuple(compared_samples),
        )
    )


@dataclass(frozen=True)
class _Shared:
    """What both runs measured, in the baseline run's order."""

    variants: tuple[str, ...]
    benchmarks: tuple[Benchmark, ...]
    metrics: tuple[Metric, ...]


def _shared(baseline: StoredRun, candidate: StoredRun) -> _Shared:
    other = candidate.experiment
    shared = _Shared(
        variants=tuple(
            v.name
            for v in baseline.experiment.variants
            if v.name in {c.name for c in other.variants}
        ),
        benchmarks=tuple(
            b
            for b in baseline.experiment.benchmarks
            if b.name in {c.name for c in other.benchmarks}
        ),
        metrics=tuple(
            m for m in baseline.experiment.settings.metrics if m in other.settings.metrics
        ),
    )
    if not shared.variants or not shared.benchmarks or not shared.metrics:
        raise ConfigError(
            f"runs {baseline.run_id} and {candidate.run_id} share no variant, benchmark and metric",
            hint="compare runs of the same experiment (same variant and benchmark names)",
        )
    return shared


def _cross_run_notes(baseline: StoredRun, candidate: StoredRun) -> list[Note]:
    notes = [
        Note(
            severity=Severity.WARNING,
            message=f"run {candidate.run_id} is compared with run {baseline.run_id}: their samples "
            "were not interleaved, so a change of the machine's speed between the runs shows "
            "up as a difference",
            hint="for a fair A/B, measure both variants in one run",
        )
    ]
    if baseline.run_id == candidate.run_id:
        notes.append(
            Note(
                severity=Severity.WARNING,
                message=f"run {baseline.run_id} is compared with itself: the ratios are 1 by "
                "construction",
                hint="give two different run ids (perflab list shows them)",
            )
        )
    return notes


def _labels(baseline: StoredRun, candidate: StoredRun, name: str) -> tuple[str, str]:
    """A variant's name in the comparison: each run's, under its run's label."""
    return f"run{baseline.run_id}:{name}", f"run{candidate.run_id}:{name}"


def _each_variant_against_itself(
    baseline: StoredRun, candidate: StoredRun, shared: _Shared
) -> Experiment:
    """The experiment the lenses analyse: every shared variant of each run, under its run's
    label, paired with itself. Its pairs are the comparisons this decides, so the family level
    counts them all (benchmarks x variants, stats.family), as a run counts its own."""
    variants: list[Variant] = []
    pairs: list[tuple[str, str]] = []
    for name in shared.variants:
        labels = _labels(baseline, candidate, name)
        variants.append(replace(_variant_of(baseline.experiment, name), name=labels[0]))
        variants.append(replace(_variant_of(candidate.experiment, name), name=labels[1]))
        pairs.append(labels)
    return replace(
        baseline.experiment,
        variants=tuple(variants),
        benchmarks=shared.benchmarks,
        settings=replace(baseline.experiment.settings, metrics=shared.metrics),
        # the stored run's pairs name its own variants: here each variant meets itself
        pairs=tuple(pairs),
        stack=(),
        interactions=(),
    )


def _variant_of(experiment: Experiment, name: str) -> Variant:
    return next(v for v in experiment.variants if v.name == name)


def _relabelled(
    run: StoredRun, label: str, variant: str, benchmark: str, metric: Metric
) -> BenchmarkData:
    data = run.data_for(benchmark, metric)
    return BenchmarkData(
        samples=tuple(replace(s, variant=label) for s in data.samples if s.variant == variant),
        artifacts=tuple(replace(a, variant=label) for a in data.artifacts if a.variant == variant),
    )


def _failed_in(data: BenchmarkData) -> bool:
    """Whether the variant failed for this lens in its run (the engine marks it so)."""
    return any(a.kind == FAILED_ARTIFACT for a in data.artifacts)
