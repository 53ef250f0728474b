"""store -> analyse: two stored runs compared variant by variant (measured apart); either may
be a run read back from its JSON document (store.json_runs), whose samples are analysed alike."""

from __future__ import annotations

from dataclasses import dataclass, replace

from perflab.analyse.gathered import GatheredAnalyses
from perflab.analyse.run import with_sections
from perflab.lenses.registry import DESCRIPTORS, lens_for, top_level_lists, wall_time_metrics
from perflab.measure.lens import FAILED_ARTIFACT, BenchmarkData
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Note, Sample, Severity, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import VariantInfo
from perflab.store import StoredRun


def compare_runs(baseline: StoredRun, candidate: StoredRun) -> RunResult:
    """Compare two stored runs variant by variant: for every variant name and benchmark present in
    both, the candidate run's measurements against the baseline run's.

    Samples of two runs were not interleaved, so machine drift between the runs is not cancelled;
    the result says so. Time samples are matched by generation, and the CI is still computed over
    generations."""
    shared = _shared(baseline, candidate)
    notes = _cross_run_notes(baseline, candidate) + _left_out_notes(baseline, candidate, shared)
    found, samples_read = _analysed(baseline, candidate, shared)
    return with_sections(
        RunResult(
            run_id=candidate.run_id,
            status=candidate.status,
            created_at=candidate.created_at,
            experiment=candidate.experiment,
            machine=candidate.machine,
            comparisons=tuple(found.comparisons),
            notes=tuple(notes + found.notes),
            variant_info={k: VariantInfo.from_json(v) for k, v in candidate.variant_info.items()},
            differences=(_measured_apart(baseline, candidate),),
            findings=tuple(found.findings),
            top_level_lists=top_level_lists(),
            wall_time_metrics=wall_time_metrics(),
            cross_run=True,
            baseline_run_id=baseline.run_id,
            samples=tuple(samples_read),
            compared_names=(_name(baseline), _name(candidate)),
        )
    )


def _analysed(
    baseline: StoredRun, candidate: StoredRun, shared: _MeasuredInBoth
) -> tuple[GatheredAnalyses, list[Sample]]:
    """Each lens's analysis of every shared variant and benchmark, the baseline run's samples
    against the candidate's as if they were two variants of one run; and the samples read."""
    found = GatheredAnalyses()
    samples_read: list[Sample] = []
    experiment = _each_variant_against_itself(baseline, candidate, shared)
    for variant_name in shared.variants:
        names = list(_labels(baseline, candidate, variant_name))
        for metric in shared.metrics:
            lens = lens_for(metric)
            for benchmark in shared.benchmarks:
                in_baseline = _relabelled(baseline, names[0], variant_name, benchmark.name, metric)
                in_candidate = _relabelled(
                    candidate, names[1], variant_name, benchmark.name, metric
                )
                merged = BenchmarkData(
                    samples=in_baseline.samples + in_candidate.samples,
                    artifacts=in_baseline.artifacts + in_candidate.artifacts,
                )
                samples_read += merged.samples
                if not in_baseline.samples and not in_baseline.artifacts:
                    continue
                # what it measured compares with nothing
                if _failed_in(in_baseline) or _failed_in(in_candidate):
                    continue
                analysis = lens.analyse(benchmark, names, merged, experiment)
                found.comparisons += analysis.comparisons
                found.add(analysis)
    return found, samples_read


@dataclass(frozen=True)
class _MeasuredInBoth:
    """What both runs measured, in the baseline run's order."""

    variants: tuple[str, ...]
    benchmarks: tuple[Benchmark, ...]
    metrics: tuple[Metric, ...]


def _name(run: StoredRun) -> str:
    """How the reports name a run: `run 12`, or the JSON file it was read from."""
    return run.source if run.source is not None else f"run {run.run_id}"


def _measured_apart(baseline: StoredRun, candidate: StoredRun) -> str:
    if baseline.source is None and candidate.source is None:
        return f"runs {baseline.run_id} and {candidate.run_id}, measured apart"
    return f"{_name(baseline)} and {_name(candidate)}, measured apart"


def _from_samples_alone(metrics: tuple[Metric, ...], *runs: StoredRun) -> tuple[Metric, ...]:
    """A JSON document holds samples, not the lenses' artifacts (profiles, call graphs): only
    the lenses analysed from samples alone (`Figures.analysed_from_samples`)."""
    if all(run.source is None for run in runs):
        return metrics
    alone = {d.metric for d in DESCRIPTORS if d.figures.analysed_from_samples}
    return tuple(m for m in metrics if m in alone)


def _shared(baseline: StoredRun, candidate: StoredRun) -> _MeasuredInBoth:
    other = candidate.experiment
    metrics = tuple(m for m in baseline.experiment.settings.metrics if m in other.settings.metrics)
    shared = _MeasuredInBoth(
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
        metrics=_from_samples_alone(metrics, baseline, candidate),
    )
    if not shared.variants or not shared.benchmarks or not shared.metrics:
        raise ConfigError(
            f"{_name(baseline)} and {_name(candidate)} share no "
            + " and ".join(_missing(baseline, candidate, shared)),
            hint="compare runs of the same experiment (same variant and benchmark names)",
        )
    return shared


def _missing(baseline: StoredRun, candidate: StoredRun, shared: _MeasuredInBoth) -> list[str]:
    """What the two runs do not share, each side's names in words."""

    def variants(run: StoredRun) -> str:
        return ", ".join(v.name for v in run.experiment.variants)

    def benchmarks(run: StoredRun) -> str:
        return ", ".join(b.name for b in run.experiment.benchmarks)

    def lenses(run: StoredRun) -> str:
        return ", ".join(str(m) for m in run.experiment.settings.metrics)

    missing = []
    for kind, found, names in (
        ("variant", shared.variants, variants),
        ("benchmark", shared.benchmarks, benchmarks),
        ("lens", shared.metrics, lenses),
    ):
        if not found:
            missing.append(
                f"{kind} ({_name(baseline)}: {names(baseline) or 'none'}; "
                f"{_name(candidate)}: {names(candidate) or 'none'})"
            )
    if not shared.metrics and (baseline.source or candidate.source):
        missing[-1] += ": a JSON file is compared by its time samples only"
    return missing


def _left_out_notes(
    baseline: StoredRun, candidate: StoredRun, shared: _MeasuredInBoth
) -> list[Note]:
    """The variants, benchmarks and lenses of one side that the other lacks: not compared."""
    left_out = []
    for run in (baseline, candidate):
        names = [v.name for v in run.experiment.variants if v.name not in shared.variants]
        benchmarks = {b.name for b in shared.benchmarks}
        names += [b.name for b in run.experiment.benchmarks if b.name not in benchmarks]
        names += [str(m) for m in run.experiment.settings.metrics if m not in shared.metrics]
        if names:
            left_out.append(f"{_name(run)}'s {', '.join(names)}")
    if not left_out:
        return []
    return [
        Note(
            severity=Severity.INFO,
            message=f"not compared (the other side lacks them): {'; '.join(left_out)}",
            hint="a JSON file is compared by its time samples only; compare stored runs for "
            "the other lenses"
            if baseline.source or candidate.source
            else None,
        )
    ]


def _cross_run_notes(baseline: StoredRun, candidate: StoredRun) -> list[Note]:
    first, second = _name(baseline), _name(candidate)
    notes = [
        Note(
            severity=Severity.WARNING,
            message=f"{second} is compared with {first}: their samples "
            "were not interleaved, so a change of the machine's speed between the runs shows "
            "up as a difference",
            hint="for a fair A/B, measure both variants in one run",
        )
    ]
    if baseline.source is None and candidate.source is None and baseline.run_id == candidate.run_id:
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
    """A variant's name in the comparison: each run's, under its run's label (a file's name,
    or `run12`); two files of one name are told apart as `A.json` and `(2)A.json`."""
    first = baseline.source or f"run{baseline.run_id}"
    second = candidate.source or f"run{candidate.run_id}"
    if first == second and (baseline.source or candidate.source):
        second = f"(2){second}"
    return f"{first}:{name}", f"{second}:{name}"


def _each_variant_against_itself(
    baseline: StoredRun, candidate: StoredRun, shared: _MeasuredInBoth
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
