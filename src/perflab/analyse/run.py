"""store -> analyse: every comparison of a stored run, derived from its raw samples and
artifacts, with the notes and report sections built from them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

from perflab.analyse.design_analysis import interactions_of, stack_summaries
from perflab.analyse.differences import interpreter_differences, variant_differences
from perflab.analyse.explanation import summaries, summary_section
from perflab.analyse.gathered import GatheredAnalyses
from perflab.analyse.hidden_dispatch import with_cpu_ran
from perflab.analyse.outputs import judge_outputs
from perflab.analyse.quantiles import quantiles_kept
from perflab.lenses.registry import descriptor_for, lens_for, top_level_lists, wall_time_metrics
from perflab.lenses.sections import lens_sections
from perflab.lenses.shared_options import analysis_cache_of
from perflab.measure.lens import FAILED_ARTIFACT, BenchmarkData, LensAnalysis
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Comparison, Experiment, Note
from perflab.records.results import RunResult
from perflab.records.run_facts import VariantInfo
from perflab.store import StoredRun
from perflab.store.analysis_cache import AnalysisCache

# a lens's analysis of one benchmark: `Lens.analyse`, or its figures alone
LensAnalyse = Callable[[Benchmark, Sequence[str], BenchmarkData, Experiment], LensAnalysis]


def _whole(metric: Metric) -> LensAnalyse:
    return lens_for(metric).analyse


def _figures_only(metric: Metric) -> LensAnalyse:
    return descriptor_for(metric).figures_analysis()


def _analyse_lenses(
    run: StoredRun, analysis_of: Callable[[Metric], LensAnalyse] = _whole
) -> GatheredAnalyses:
    """Every lens's comparisons of every benchmark, in the order of the planned pairs."""
    experiment = run.experiment
    names = [v.name for v in experiment.variants]
    order = {pair: i for i, pair in enumerate(experiment.comparison_pairs)}
    analysed = GatheredAnalyses(notes=list(run.notes))
    for metric in experiment.settings.metrics:
        analyse = analysis_of(metric)
        for benchmark in experiment.benchmarks:
            data, failed = _without_failed(run.data_for(benchmark.name, metric))
            if not data.samples and not data.artifacts:
                continue
            analysed.data_of[(benchmark.name, metric)] = data
            found: list[Comparison] = []
            for group in _comparison_groups(experiment, names, data, failed):
                analysis = analyse(benchmark, group, data, experiment)
                found += analysis.comparisons
                analysed.add(analysis)
            analysed.comparisons += sorted(
                found, key=lambda c: order.get((c.baseline, c.variant), 0)
            )
    return analysed


def analyse_run(run: StoredRun) -> RunResult:
    """Derive every comparison of a stored run from its raw samples and artifacts."""
    # the t quantiles of earlier analyses: scipy.special is imported only for new ones (not
    # where the run said --no-analysis-cache: nothing is read or written then)
    enabled = analysis_cache_of(run.experiment.settings)
    with quantiles_kept(AnalysisCache.default(enabled=enabled)):
        return _analyse_run(run)


def run_figures(run: StoredRun) -> tuple[Comparison, ...]:
    """Every comparison of a stored run, its figures alone (ratio, interval, verdict, values;
    no details), the same to the bit as `analyse_run`'s: each lens's `figures` analysis, the
    output checks' verdicts, and nothing else (no notes, sections or explanation). What a
    published site's trends read; a run's page shows `analyse_run`'s."""
    enabled = analysis_cache_of(run.experiment.settings)
    with quantiles_kept(AnalysisCache.default(enabled=enabled)):
        analysed = _analyse_lenses(run, _figures_only)
    comparisons, _ = judge_outputs(run, analysed.comparisons)
    return tuple(replace(c, details=None) for c in comparisons)


def _analyse_run(run: StoredRun) -> RunResult:
    experiment = run.experiment
    analysed = _analyse_lenses(run)
    comparisons, check_notes = judge_outputs(run, analysed.comparisons)
    comparisons = with_cpu_ran(comparisons)  # rows a tool ran as the CPU did not say so
    notes = analysed.notes + check_notes
    # imported here: it reads the lenses' analysis types through their hooks, whose modules
    # take seconds to import on a loaded machine, and perflab's start-up is in the budget
    from perflab.analyse.same_work import disagreement_notes, same_work_notes

    notes += same_work_notes(experiment, comparisons, run.machine)
    notes += disagreement_notes(comparisons, run.machine)
    differences = variant_differences(experiment.variants) + interpreter_differences(
        run.variant_info
    )
    return with_sections(
        RunResult(
            run_id=run.run_id,
            status=run.status,
            created_at=run.created_at,
            experiment=experiment,
            machine=run.machine,
            comparisons=tuple(comparisons),
            notes=tuple(dedupe_notes(notes)),
            variant_info={k: VariantInfo.from_json(v) for k, v in run.variant_info.items()},
            differences=tuple(differences),
            error=run.error,
            findings=tuple(analysed.findings),
            top_level_lists=top_level_lists(),
            wall_time_metrics=wall_time_metrics(),
            samples=run.samples,
            artifacts=run.artifacts,
            measurements=tuple(analysed.measurements.values()),
            stacks=stack_summaries(experiment, comparisons),
            interactions=interactions_of(experiment, comparisons, analysed.data_of),
        )
    )


def with_sections(result: RunResult) -> RunResult:
    """The result with every lens's report section built from its analysis, after the summary
    of each pair that joins them (perflab.analyse.explanation)."""
    found = summaries(result.comparisons)
    summary = summary_section(found)
    sections = lens_sections(result)
    if summary is not None:
        sections = (summary, *sections)
    return replace(result, sections=sections, summaries=found)


def _without_failed(data: BenchmarkData) -> tuple[BenchmarkData, set[str]]:
    """A lens's data without the variants it marked as failed (what they measured before
    failing compares with nothing), and those variants."""
    failed = {a.variant for a in data.artifacts if a.kind == FAILED_ARTIFACT}
    if not failed:
        return data, failed
    kept = BenchmarkData(
        samples=tuple(s for s in data.samples if s.variant not in failed),
        artifacts=tuple(a for a in data.artifacts if a.variant not in failed),
    )
    return kept, failed


def _comparison_groups(
    experiment: Experiment, names: list[str], data: BenchmarkData, failed: set[str]
) -> list[list[str]]:
    """The variant lists to hand a lens's analyse (which compares list[1:] with list[0]): all
    variants when the plan names no pairs (but those that failed: without the baseline,
    none); else one list per baseline, with the variants it is compared with, leaving out
    variants with no data (they failed to build or measure)."""
    if not experiment.pairs and not failed:
        return [names]
    if not experiment.pairs:
        kept = [n for n in names if n not in failed]
        return [kept] if kept and kept[0] == names[0] and len(kept) > 1 else []
    measured = {s.variant for s in data.samples} | {a.variant for a in data.artifacts}
    grouped: dict[str, list[str]] = defaultdict(list)
    for baseline, variant in experiment.pairs:
        if baseline in measured and variant in measured and variant not in grouped[baseline]:
            grouped[baseline].append(variant)
    return [[baseline, *variants] for baseline, variants in grouped.items() if variants]


def dedupe_notes(notes: list[Note]) -> list[Note]:
    """Drop repeats, and run-level notes (from preflight, before anything was measured) that a
    benchmark's analysis says again, more precisely, with the same hint."""
    said_per_benchmark = {
        (n.metric, n.hint) for n in notes if n.benchmark is not None and n.hint is not None
    }
    kept: list[Note] = []
    for note in notes:
        if note in kept:
            continue
        if note.benchmark is None and (note.metric, note.hint) in said_per_benchmark:
            continue
        kept.append(note)
    return kept
