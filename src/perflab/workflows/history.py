"""`history`: one result per commit of a range, kept and reused by tree, benchmark and lens; the
series' change points, each confirmed by a direct comparison of the commits either side; a
suite's series benchmark by benchmark."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from perflab.analyse.places import placed_history_points
from perflab.analyse.run_levels import levelled_across_runs
from perflab.analyse.same_work import gate_disagreement
from perflab.engine.reusable_runs import MeasuredCode, StoredPair
from perflab.git.repo import (
    first_parent_line,
    resolve_ref,
    split_range,
)
from perflab.machine.proc import ProcessRunner
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Variant
from perflab.records.results import RunResult
from perflab.records.workflow_results import (
    HistoryChange,
    HistoryPoint,
    HistoryResult,
    SeriesStep,
    SuiteHistory,
)
from perflab.stats.changepoints import change_points
from perflab.workflows.benchmarked import (
    Benchmarked,
    Lenses,
    evidence_lenses,
    given_lenses,
    instructions_available,
    main_comparisons,
    planned_experiment,
)
from perflab.workflows.services import WorkflowServices


def history(
    range_text: str,
    *,
    benchmark: Benchmarked,
    every: int = 1,
    threshold: float = 0.02,
    metric: Lenses = None,
    repository: str | Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> HistoryResult:
    """One result per commit of RANGE's first-parent line (its base included; every `every`th
    commit counted back from the tip), each kept and reused by tree, benchmark and lens;
    change points of the series, each checked by a direct comparison of the commits either
    side. The first lens of `metric` is the series; the direct comparisons measure the others
    given, and time and instructions, beside it. A suite (`benchmark.suite`): the first
    benchmark's series; `suite_history` gives each one's."""
    services = WorkflowServices(repository=repository, clock=clock)
    return history_with(
        range_text,
        benchmark=benchmark,
        services=services,
        every=every,
        threshold=threshold,
        metric=metric,
    )


def history_with(
    range_text: str,
    *,
    benchmark: Benchmarked,
    services: WorkflowServices,
    every: int = 1,
    threshold: float = 0.02,
    metric: Lenses = None,
) -> HistoryResult:
    """`history`, its repository and clock given as one record (the CLI's way in)."""
    started = services.clock()
    plan = _HistoryPlan.made(range_text, benchmark, every, threshold, metric, services)
    points, wanted = _known_points(plan, None)
    figures: dict[tuple[str, int], float] = {}
    for part in _told_parts(wanted, len(plan.commits), services):
        figures.update(_measured_part(plan, points, part))
    found = _series(plan, points, None, {}, figures)
    return replace(found, measured_now=len(wanted), seconds=services.clock() - started)


def suite_history(
    range_text: str,
    *,
    benchmark: Benchmarked,
    every: int = 1,
    threshold: float = 0.02,
    metric: Lenses = None,
    repository: str | Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SuiteHistory:
    """`history` of every benchmark of a suite: the commits that any benchmark lacks in the
    store are measured in one run of the whole suite, then each benchmark has its own series
    and its own change points (a direct comparison of two commits is one run of the suite,
    shared by the benchmarks that change there)."""
    services = WorkflowServices(repository=repository, clock=clock)
    return suite_history_with(
        range_text,
        benchmark=benchmark,
        services=services,
        every=every,
        threshold=threshold,
        metric=metric,
    )


def suite_history_with(
    range_text: str,
    *,
    benchmark: Benchmarked,
    services: WorkflowServices,
    every: int = 1,
    threshold: float = 0.02,
    metric: Lenses = None,
) -> SuiteHistory:
    """`suite_history`, its repository and clock given as one record (the CLI's way in)."""
    started = services.clock()
    plan = _HistoryPlan.made(range_text, benchmark, every, threshold, metric, services)
    known = {name: _known_points(plan, name) for name in plan.benchmarks}
    wanted = {tree: at for _, missing in known.values() for tree, at in missing.items()}
    figures: dict[str, dict[tuple[str, int], float]] = {name: {} for name in known}
    for part in _told_parts(wanted, len(plan.commits), services):
        for name, found in _measured_suite_part(plan, known, part).items():
            figures[name].update(found)
    if all(p.value is None for points, _ in known.values() for p in points):
        raise _nothing_measured(range_text, [p for points, _ in known.values() for p in points])
    compared: dict[tuple[str, str], StoredPair] = {}
    series = [
        replace(_series(plan, points, name, compared, figures[name]), measured_now=len(missing))
        for name, (points, missing) in known.items()
    ]
    seconds = services.clock() - started
    return SuiteHistory(
        range_text=range_text,
        metric=plan.chosen,
        threshold=threshold,
        series=tuple(replace(s, seconds=seconds) for s in series),
        measured_now=len(wanted),
        seconds=seconds,
        notes=tuple(plan.notes),
    )


class _Commit(NamedTuple):
    """A commit of the series measured: its sha, its subject and its tree."""

    sha: str
    subject: str
    tree: str


@dataclass(frozen=True)
class _HistoryPlan:
    """What a history measures and decides with: the commits, the lens of the series, the
    threshold of a change, what the store holds."""

    benchmark: Benchmarked
    repo: str
    range_text: str
    threshold: float  # the smallest change of level a change point is
    line: list[tuple[str, str]]  # RANGE's base and first-parent line, oldest first
    commits: list[_Commit]  # those measured, oldest first
    chosen: Metric
    lenses: tuple[Metric, ...]
    notes: tuple[str, ...]
    measured: MeasuredCode
    benchmarks: tuple[str, ...]  # the benchmarks' names, as listed now
    services: WorkflowServices

    @classmethod
    def made(
        cls,
        range_text: str,
        benchmark: Benchmarked,
        every: int,
        threshold: float,
        metric: Lenses,
        services: WorkflowServices,
    ) -> _HistoryPlan:
        if every < 1:
            raise ConfigError(f"--every must be 1 or more, got {every}", hint="e.g. --every 4")
        lenses = given_lenses(metric, benchmark)
        runner = benchmark.runner
        repo = services.repository_path(runner)
        line = _range_line(runner, repo, range_text)
        default = Metric.INSTRUCTIONS if instructions_available() else Metric.TIME
        chosen = lenses[0] if lenses else default
        commits = [
            _Commit(commit, subject, resolve_ref(runner, repo, commit).tree)
            for commit, subject in line[::-1][::every][::-1]
        ]
        planned = planned_experiment(benchmark)
        return cls(
            benchmark=benchmark,
            repo=repo,
            range_text=range_text,
            threshold=threshold,
            line=line,
            commits=commits,
            chosen=chosen,
            lenses=lenses,
            notes=() if lenses else (_history_lens_note(chosen),),
            measured=MeasuredCode.read(benchmark.store_path, planned),
            benchmarks=tuple(b.name for b in planned.benchmarks),
            services=services,
        )


def _series(
    plan: _HistoryPlan,
    points: list[HistoryPoint],
    name: str | None,
    compared: dict[tuple[str, str], StoredPair],
    figures: Mapping[tuple[str, int], float],
) -> HistoryResult:
    """One benchmark's series (`name`; None: the first's), placed by node, levelled across its
    runs, its change points confirmed by direct comparisons (`compared`: those measured
    already in this history). `figures`: (tree, run) -> its figure, of the runs measured now
    (the store's are read from it). A series with no value is an error alone; a suite's
    benchmark that failed everywhere is a series of skipped points beside the others."""
    valued = [i for i, p in enumerate(points) if p.value is not None]
    if not valued and name is None:
        raise _nothing_measured(plan.range_text, points)
    chosen = plan.chosen
    placed, placed_note = placed_history_points(points, plan.benchmark.store_path, chosen)

    def figure_in_run(point: HistoryPoint, run_id: int) -> float | None:
        found = figures.get((point.tree, run_id))
        return (
            found if found is not None else plan.measured.value_in(point.tree, run_id, chosen, name)
        )

    levelled = levelled_across_runs(placed, figure_in_run, chosen)
    points = list(levelled.points)
    said = (placed_note, levelled.note)
    notes = (*plan.notes, *(note for note in said if note))
    changes = _history_changes(plan, points, valued, name, compared)
    return HistoryResult(
        range_text=plan.range_text,
        metric=chosen,
        threshold=plan.threshold,
        points=tuple(points),
        changes=_with_unmeasured_between(changes, plan.line),
        measured_now=0,
        seconds=0.0,
        notes=notes,
        benchmark=name,
        run_scales=levelled.scales,
    )


def measured_code(benchmark: Benchmarked) -> MeasuredCode:
    """What the benchmark's store already holds of this benchmark and its settings (of any
    lens: each figure read is asked for by lens)."""
    return MeasuredCode.read(benchmark.store_path, planned_experiment(benchmark))


def _range_line(runner: ProcessRunner, repo: str, range_text: str) -> list[tuple[str, str]]:
    """RANGE's base and its first-parent line up to the tip, oldest first, as (commit, subject)."""
    start, end = split_range(range_text)
    base = resolve_ref(runner, repo, start)
    tip = resolve_ref(runner, repo, end)
    return [(base.commit, base.subject), *first_parent_line(runner, repo, base, tip)]


def _with_unmeasured_between(
    changes: list[HistoryChange], line: list[tuple[str, str]]
) -> tuple[HistoryChange, ...]:
    place = {commit: i for i, (commit, _) in enumerate(line)}
    return tuple(
        replace(c, unmeasured_between=place[c.after.commit] - place[c.before.commit] - 1)
        for c in changes
    )


def _history_lens_note(chosen: Metric) -> str:
    return f"the {chosen} lens: " + (
        "instruction counts are deterministic, so results of separate runs compare"
        if chosen is Metric.INSTRUCTIONS
        else "valgrind is not installed; times of separate runs drift with the machine"
    )


def _known_points(
    plan: _HistoryPlan, name: str | None
) -> tuple[list[HistoryPoint], dict[str, list[int]]]:
    """A point per commit, valued from the store where a run of it holds its tree (benchmark
    `name`'s figure; None: the first benchmark's); and for each tree still to measure, the
    indices of the points that need it."""
    points: list[HistoryPoint] = []
    wanted: dict[str, list[int]] = {}
    for commit, subject, tree in plan.commits:
        known = plan.measured.value(tree, plan.chosen, name)
        if known is not None:
            value, unit, run_id = known
            points.append(HistoryPoint(commit, subject, tree, value, unit, run_id, reused=True))
        else:
            points.append(HistoryPoint(commit, subject, tree))
            wanted.setdefault(tree, []).append(len(points) - 1)
    return points, wanted


# A history measures its commits in runs of at most this many, one run after another: a run's
# analysis holds every variant's samples and profiles at once, so perflab's memory would grow
# with the history's length.
COMMITS_PER_RUN = 32


def runs_of(
    wanted: Mapping[str, list[int]], size: int | None = None
) -> Iterator[dict[str, list[int]]]:
    """The wanted trees in parts of at most `size` (None: COMMITS_PER_RUN), oldest first,
    one part per run."""
    size = size or COMMITS_PER_RUN
    trees = list(wanted)
    for start in range(0, len(trees), size):
        yield {tree: wanted[tree] for tree in trees[start : start + size]}


def _shared_point(
    plan: _HistoryPlan, part: Mapping[str, list[int]], valued: set[int]
) -> int | None:
    """The point a part's run measures again beside its own: the nearest one before the part
    with a value (of the run before, or of the store), so that the two runs' levels can be
    compared through it; None: the part starts the series."""
    first = min(i for at in part.values() for i in at)
    for i in range(first - 1, -1, -1):
        if i in valued and plan.commits[i].tree not in part:
            return i
    return None


def _measured_part(
    plan: _HistoryPlan, points: list[HistoryPoint], part: Mapping[str, list[int]]
) -> dict[tuple[str, int], float]:
    """Measures a part in one run (with its shared point) and fills its points in; the figure
    of each tree the run measured, by (tree, run). No name holds the run once this returns:
    one run's analysis is in memory at a time."""
    valued = {i for i, p in enumerate(points) if p.value is not None}
    result, names = _measure_trees(plan.benchmark, plan, part, _shared_point(plan, part, valued))
    _fill_points(points, part, result, names, plan.chosen, None)
    return _run_figures(result, names, plan.chosen, None)


def _measured_suite_part(
    plan: _HistoryPlan,
    known: Mapping[str, tuple[list[HistoryPoint], dict[str, list[int]]]],
    part: Mapping[str, list[int]],
) -> dict[str, dict[tuple[str, int], float]]:
    """`_measured_part` for each benchmark of a suite, from one run of the whole suite."""
    valued = {
        i for points, _ in known.values() for i, p in enumerate(points) if p.value is not None
    }
    result, names = _measure_trees(plan.benchmark, plan, part, _shared_point(plan, part, valued))
    _fill_suite_points(known, part, result, names, plan.chosen)
    return {name: _run_figures(result, names, plan.chosen, name) for name in known}


def _told_parts(
    wanted: Mapping[str, list[int]], commits: int, services: WorkflowServices
) -> Iterator[dict[str, list[int]]]:
    """`runs_of(wanted)`, each part told to `WorkflowServices.on_part` before it is measured."""
    done = 0
    for part in runs_of(wanted):
        if services.on_part is not None:
            held = commits - sum(len(at) for at in wanted.values())
            services.on_part(done, len(part), len(wanted), held)
        yield part
        done += len(part)


def _measure_trees(
    benchmark: Benchmarked,
    plan: _HistoryPlan,
    wanted: Mapping[str, list[int]],
    shared: int | None = None,
) -> tuple[RunResult, dict[str, str]]:
    """Measures each wanted tree (at the first of its commits) in one run, the tree of point
    `shared` first (measured again: the run's level against the one before): the run, and
    the name of each tree's variant in it."""
    commit_of = {tree: plan.commits[at[0]].sha for tree, at in wanted.items()}
    if shared is not None:
        shared_commit = plan.commits[shared]
        commit_of = {shared_commit.tree: shared_commit.sha, **commit_of}
    names = {tree: f"c{commit[:10]}" for tree, commit in commit_of.items()}
    variants = [Variant(name=names[tree], git=commit) for tree, commit in commit_of.items()]
    if len(variants) == 1:  # an experiment compares: the one new commit against itself
        variants.append(Variant(name=variants[0].name + "-again", git=variants[0].git))
    pairs = [(variants[0].name, v.name) for v in variants[1:]]
    pairs += [(a.name, b.name) for a, b in zip(variants[1:], variants[2:], strict=False)]
    experiment = replace(
        benchmark.experiment(variants, metrics=(plan.chosen,)), pairs=tuple(dict.fromkeys(pairs))
    )
    return benchmark.run(experiment, plan.repo), names


def _fill_points(
    points: list[HistoryPoint],
    wanted: Mapping[str, list[int]],
    result: RunResult,
    names: Mapping[str, str],
    metric: Metric,
    benchmark_name: str | None,
) -> None:
    """Fills the wanted points in from the run (benchmark `benchmark_name`'s figures; None:
    the first benchmark's), or says why a point has none."""
    values = _variant_values(result, metric, benchmark_name)
    failed = {
        f.variant: f.message
        for f in result.failures
        if f.variant and (benchmark_name is None or f.benchmark in (None, benchmark_name))
    }
    for tree, at in wanted.items():
        name = names[tree]
        for i in at:
            point = points[i]
            if name in values:
                value, unit = values[name]
                points[i] = replace(point, value=value, unit=unit, run_id=result.run_id)
            else:
                why = failed.get(name) or _error_naming(result, name) or "nothing was measured"
                points[i] = replace(point, run_id=result.run_id, skipped=why)


def _variant_values(
    result: RunResult, metric: Metric, benchmark_name: str | None
) -> dict[str, tuple[float, str]]:
    """Each variant's figure per iteration and its unit (benchmark `benchmark_name`'s; None:
    the first benchmark's)."""
    values: dict[str, tuple[float, str]] = {}
    for c in result.comparisons:
        if c.metric is metric and c.event is None and benchmark_name in (None, c.benchmark):
            values.setdefault(c.baseline, (c.baseline_value, c.unit))
            values.setdefault(c.variant, (c.variant_value, c.unit))
    return values


def _run_figures(
    result: RunResult, names: Mapping[str, str], metric: Metric, benchmark_name: str | None
) -> dict[tuple[str, int], float]:
    """The figure of each tree the run measured, by (tree, run)."""
    values = _variant_values(result, metric, benchmark_name)
    return {
        (tree, result.run_id): values[name][0] for tree, name in names.items() if name in values
    }


def _error_naming(result: RunResult, variant: str) -> str | None:
    """The run's error where it names the variant: a suite's failures are kept there alone."""
    if result.error and f"variant {variant!r}" in result.error:
        return result.error
    return None


def _fill_suite_points(
    known: Mapping[str, tuple[list[HistoryPoint], dict[str, list[int]]]],
    part: Mapping[str, list[int]],
    result: RunResult,
    names: Mapping[str, str],
    metric: Metric,
) -> None:
    """Fills in, for each benchmark of a suite, the points the run of `part` measured."""
    for name, (points, missing) in known.items():
        measured = {tree: missing[tree] for tree in part if tree in missing}
        _fill_points(points, measured, result, names, metric, name)


def _nothing_measured(range_text: str, points: list[HistoryPoint]) -> BenchmarkFailedError:
    reasons = sorted({p.skipped for p in points if p.skipped})
    return BenchmarkFailedError(
        f"no commit of {range_text} could be built and measured ({len(points)} tried)",
        hint="fix the build command or the benchmark (the first reason is below); the runs "
        "are kept in the store",
        detail=reasons[0] if reasons else None,
    )


def _history_changes(
    plan: _HistoryPlan,
    points: list[HistoryPoint],
    valued: list[int],
    name: str | None,
    compared: dict[tuple[str, str], StoredPair],
) -> list[HistoryChange]:
    """The series' change points, each confirmed by a direct comparison measured with the
    evidence lenses, the series' lens first (one the store holds already, one this history
    measured for another benchmark, or a new run)."""
    metrics = evidence_lenses(plan.chosen, plan.lenses)
    series = [points[i].series_value or 0.0 for i in valued]
    changes: list[HistoryChange] = []
    for found in change_points(series, min_step=plan.threshold):
        after = points[valued[found.index]]
        before = points[valued[found.index - 1]]
        stored = compared.get((before.tree, after.tree)) or plan.measured.pair(
            before.tree, after.tree, metrics
        )
        reused = stored is not None
        if stored is None:
            if plan.services.on_confirm is not None:
                plan.services.on_confirm(before.commit, after.commit)
            variants = [
                Variant(name="before", git=before.commit),
                Variant(name="after", git=after.commit),
            ]
            benchmark = plan.benchmark
            result = benchmark.run(benchmark.experiment(variants, metrics=metrics), plan.repo)
            stored = StoredPair(result, "before", "after")
        stored = kept_while_going_on(stored)
        compared[(before.tree, after.tree)] = stored
        step = SeriesStep(valued[found.index], before, after, found.ratio)
        change = confirmed_change(stored, step, metrics[0], plan.threshold, benchmark=name)
        # the run is in the store, where a change point's page reads it back whole
        changes.append(replace(change, reused=reused, result=None))
    return changes


def kept_while_going_on(stored: StoredPair) -> StoredPair:
    """What a history keeps of a direct comparison until it ends: the verdicts and intervals it
    reads, not the samples, artifacts, sections and lens details the store holds (7 MiB a run
    kept whole: 25 change points of a 501-commit history took perflab to 260 MiB)."""
    result = stored.result
    light = replace(
        result,
        comparisons=tuple(replace(c, details=None) for c in result.comparisons),
        samples=(),
        artifacts=(),
        sections=(),
        measurements=(),
        findings=(),
    )
    return StoredPair(light, stored.before, stored.after)


def confirmed_change(
    stored: StoredPair,
    step: SeriesStep,
    metric: Metric,
    threshold: float,
    *,
    benchmark: str | None = None,
) -> HistoryChange:
    """What the direct comparison of the commits either side of a change point says (of
    `benchmark` in it; None: its first)."""
    result = stored.result
    names = (stored.before, stored.after)
    of = [c for c in result.comparisons if benchmark in (None, c.benchmark)]
    found = [
        c for c in main_comparisons(result, metric, *names) if benchmark in (None, c.benchmark)
    ]
    disagreement = gate_disagreement(of, metric, names, threshold)
    if not found:
        return replace(step.unconfirmed(result.run_id), result=result)
    c = found[0]
    limit = 1.0 + threshold
    confirmed = (c.ci_low > limit) if step.series_ratio > 1 else (c.ci_high < 1.0 / limit)
    return HistoryChange(
        index=step.index,
        before=step.before,
        after=step.after,
        series_ratio=step.series_ratio,
        ratio=c.ratio,
        ci_low=c.ci_low,
        ci_high=c.ci_high,
        confirmed=confirmed,
        run_id=result.run_id,
        result=result,
        disagreement=disagreement,
    )
