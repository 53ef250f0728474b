"""A team's workflows over a repository's history, built on experiments of git= variants:
`bisect` (find the commit), `check` (a CI gate against the merge base) and `history` (one
result per commit, with change points). Every measurement is an ordinary run, kept in the
store; these functions plan the runs and read their comparisons."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab import api
from perflab.analyse.machines import placed_history_points
from perflab.git.repo import (
    GitError,
    ResolvedRef,
    dirty_summary,
    find_repository,
    first_parent_line,
    resolve_ref,
    run_git,
    split_range,
    working_tree_patch,
)
from perflab.machine.proc import SubprocessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.git_prepare import WORKING_TREE_PATCH
from perflab.plan.bisect_search import (
    BisectResult,
    BisectStep,
    Commit,
    SearchOutcome,
    StepOutcome,
    StepState,
    classify,
    search,
)
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.model import Experiment, Metric, Settings, Variant
from perflab.records.results import RunResult
from perflab.records.workflow_results import CheckResult, HistoryChange, HistoryPoint, HistoryResult
from perflab.stats.changepoints import change_points
from perflab.store import make_store_folder
from perflab.store.postgres import is_postgresql
from perflab.store.sqlite import DEFAULT_STORE_PATH


@dataclass(frozen=True)
class Benchmarked:
    """What every run of a workflow measures: the benchmark, the build, the settings."""

    stmt: str | None = None
    setup: str | None = None
    cmd: str | None = None
    name: str | None = None
    build: str | None = None
    each: str | None = None
    settings: Mapping[str, Any] | None = None
    store_path: str | Path | None = DEFAULT_STORE_PATH
    cache_dir: str | Path | None = None

    def experiment(
        self, variants: list[Variant], *, metrics: tuple[Metric, ...], budget_scale: float = 1.0
    ) -> Experiment:
        settings = dict(self.settings or {})
        settings["metrics"] = ",".join(m.value for m in metrics)
        if Metric.TIME not in metrics:
            # the other lenses measure each commit once whatever the budget: a history of many
            # commits must not be refused for a budget that only the time lens spends
            settings.setdefault("min_measurements_anyway", True)
        if budget_scale != 1.0:
            budget = settings.get("budget_s") or Settings().budget_s
            settings["budget_s"] = float(budget) * budget_scale
        template = api._template(self.each)
        if template is not None:
            variants = [replace(template, name=v.name, git=v.git, apply=v.apply) for v in variants]
        return api.make_experiment(
            stmt=self.stmt,
            setup=self.setup,
            cmd=self.cmd,
            name=self.name,
            variants=variants,
            build=self.build,
            **settings,
        )

    def run(self, experiment: Experiment, repository: str) -> RunResult:
        return api.run(
            replace(experiment, repository=repository),
            store_path=self.store_path,
            cache_dir=self.cache_dir,
        )


def instructions_available() -> bool:
    return shutil.which("valgrind") is not None


def _main_comparisons(result: RunResult, metric: Metric, baseline: str, variant: str) -> list[Any]:
    return [
        c
        for c in result.comparisons
        if c.metric is metric and c.event is None and (c.baseline, c.variant) == (baseline, variant)
    ]


# ---- bisect


def bisect(
    good: str,
    bad: str,
    *,
    benchmark: Benchmarked,
    threshold: float = 0.02,
    metric: Metric | None = None,
    repository: str | Path | None = None,
    on_step: Callable[[BisectStep, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> BisectResult:
    """The first commit on BAD's first-parent line after GOOD that is worse than GOOD by more
    than `threshold`. Without `metric`, the instructions lens (deterministic) is tried first
    and the time lens used when instructions do not show the regression."""
    started = clock()
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    good_ref = resolve_ref(runner, repo, good)
    bad_ref = resolve_ref(runner, repo, bad)
    line = tuple(Commit(c, s) for c, s in first_parent_line(runner, repo, good_ref, bad_ref))
    steps = _BisectSteps(benchmark, repo, line, good_ref, threshold, on_step)
    chosen, prior, outcome, notes = _search_with_a_lens(steps, metric)
    culprit = line[outcome.culprit] if outcome.culprit is not None else None
    evidence: RunResult | None = None
    if outcome.culprit is not None:
        evidence = _culprit_evidence(steps, outcome.culprit, chosen)
    return BisectResult(
        good=Commit(good_ref.commit, good_ref.subject),
        bad=Commit(bad_ref.commit, bad_ref.subject),
        metric=chosen,
        threshold=threshold,
        line=line,
        steps=prior + outcome.steps,
        culprit=culprit,
        candidates=tuple(line[i] for i in outcome.candidates),
        stopped=outcome.stopped,
        seconds=clock() - started,
        evidence_run=evidence.run_id if evidence is not None else None,
        notes=tuple(notes),
        evidence=evidence,
    )


@dataclass(frozen=True)
class _BisectSteps:
    """One bisect step: a commit of the line measured against GOOD, reported to `on_step`."""

    benchmark: Benchmarked
    repo: str
    line: tuple[Commit, ...]
    good: ResolvedRef
    threshold: float
    on_step: Callable[[BisectStep, int], None] | None

    def search(self, metric: Metric) -> SearchOutcome:
        return search(self.line, lambda index, attempt: self._step(metric, index, attempt))

    def _step(self, metric: Metric, index: int, attempt: int) -> StepOutcome:
        outcome = self._measure(metric, index, attempt)
        if self.on_step is not None:
            commit = self.line[index]
            self.on_step(
                BisectStep(index, commit.commit, commit.subject, outcome, attempt), len(self.line)
            )
        return outcome

    def _measure(self, metric: Metric, index: int, attempt: int) -> StepOutcome:
        commit = self.line[index]
        name = commit.short
        experiment = self.benchmark.experiment(
            [Variant(name="good", git=self.good.commit), Variant(name=name, git=commit.commit)],
            metrics=(metric,),
            budget_scale=2.0 ** (attempt - 1),
        )
        result = self.benchmark.run(experiment, self.repo)
        failed = {f.variant: f for f in result.failures}
        if "good" in failed:
            raise GitError(
                f"GOOD ({self.good.ref}, {self.good.short}) could not be measured: "
                f"{failed['good'].message}",
                hint="GOOD must build and run: give a GOOD commit that does (its run is "
                f"kept: perflab show {result.run_id})",
                detail=failed["good"].detail,
            )
        outcome = classify(_main_comparisons(result, metric, "good", name), self.threshold)
        if outcome is None:
            reason = failed[name].message if name in failed else "nothing was measured"
            return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason=reason)
        return replace(outcome, run_id=result.run_id)


def _search_with_a_lens(
    steps: _BisectSteps, metric: Metric | None
) -> tuple[Metric, tuple[BisectStep, ...], SearchOutcome, list[str]]:
    """The search with `metric`; without one, with instructions first and time where the
    instructions do not show the regression (whose steps are kept as `prior`)."""
    if metric is not None:
        return metric, (), steps.search(metric), []
    if not instructions_available():
        notes = ["valgrind is not installed: bisecting with the time lens"]
        return Metric.TIME, (), steps.search(Metric.TIME), notes
    outcome = steps.search(Metric.INSTRUCTIONS)
    if not outcome.steps:
        return Metric.INSTRUCTIONS, (), outcome, []
    first = outcome.steps[0].outcome
    if first.state is StepState.GOOD:
        notes = [
            f"instructions did not show the regression (BAD/GOOD {first.ratio:.3f}): "
            "bisecting with the time lens"
        ]
        return Metric.TIME, outcome.steps, steps.search(Metric.TIME), notes
    notes = [
        "bisecting with the instructions lens: deterministic counts answer each step "
        "without noise (give --metric time to bisect wall time)"
    ]
    return Metric.INSTRUCTIONS, (), outcome, notes


def _culprit_evidence(steps: _BisectSteps, culprit: int, metric: Metric) -> RunResult:
    """The culprit against its parent, with the instructions lens beside `metric` when it can."""
    parent = steps.line[culprit - 1].commit if culprit > 0 else steps.good.commit
    metrics: tuple[Metric, ...] = (metric,)
    if metric is not Metric.INSTRUCTIONS and instructions_available():
        metrics = (metric, Metric.INSTRUCTIONS)
    experiment = steps.benchmark.experiment(
        [
            Variant(name="parent", git=parent),
            Variant(name="culprit", git=steps.line[culprit].commit),
        ],
        metrics=metrics,
    )
    return steps.benchmark.run(experiment, steps.repo)


# ---- check: a CI gate


SHARED_RUNNER_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "CI")


def default_base(environ: Mapping[str, str]) -> str:
    """The base a pull request targets, from the CI's variables; `origin/HEAD` elsewhere."""
    for variable in ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"):
        if environ.get(variable):
            return f"origin/{environ[variable]}"
    return "origin/HEAD"


def shared_runner(environ: Mapping[str, str]) -> str | None:
    """The variable that says this runs on a CI runner (shared, unless told otherwise)."""
    for variable in SHARED_RUNNER_VARIABLES:
        if environ.get(variable, "").lower() in ("true", "1", "yes"):
            return variable
    return None


def _fetch_hint(ref: str, remotes: Sequence[str]) -> str:
    """`git fetch REMOTE BRANCH` for a remote-tracking ref of one of `remotes` (the longest
    that matches: a remote's name may hold '/'), else from origin; every word quoted."""
    known = {*remotes, "origin"}  # a CI's base is origin's, fetched or not
    remote = max((r for r in known if ref.startswith(r + "/")), key=len, default=None)
    fetch = (
        f"git fetch {shlex.quote(remote)} {shlex.quote(ref[len(remote) + 1 :])}"
        if remote is not None
        else f"git fetch origin {shlex.quote(ref)}"
    )
    return (
        f"fetch it first: {fetch} (GitHub Actions: actions/checkout with fetch-depth: 0; "
        "GitLab CI: variables: GIT_DEPTH: 0), or give the base with --base REF"
    )


def check(
    base: str | None = None,
    *,
    benchmark: Benchmarked,
    head: str | None = None,
    threshold: float = 0.02,
    metric: Metric | None = None,
    merge_base: bool = True,
    repository: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CheckResult:
    """`head` against the merge base of `base` and `head` (or `base` itself): a regression is
    a ratio whose whole CI is above 1 + threshold. Without `head`: the working tree, that is
    HEAD with its uncommitted changes to tracked files applied (HEAD alone when it is clean).
    On a CI runner without `metric`, the instructions lens (deterministic; shared runners
    make wall time noise)."""
    environ = os.environ if environ is None else environ
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    base_ref = base or default_base(environ)
    working_tree = head is None
    head = head or "HEAD"
    notes: list[str] = []
    base_commit = _resolve_base(runner, repo, base_ref, from_ci=not base)
    head_commit = resolve_ref(runner, repo, head)
    compared = base_commit
    if merge_base:
        compared = _merge_base(runner, repo, base_ref, base_commit, head, head_commit, notes)
    chosen = metric or _check_metric(environ, notes)
    uncommitted = ""
    if working_tree and dirty_summary(runner, repo) is not None:
        uncommitted = working_tree_patch(runner, repo)
    if compared.commit == head_commit.commit and not uncommitted:
        raise _no_change(head, compared)
    result = _measure_change(benchmark, repo, chosen, compared, head_commit, uncommitted, notes)
    return CheckResult(
        base_ref=base_ref,
        base=Commit(compared.commit, compared.subject),
        head=Commit(head_commit.commit, head_commit.subject),
        working_tree=bool(uncommitted),
        metric=chosen,
        threshold=threshold,
        outcome=_check_outcome(result, chosen, threshold),
        result=result,
        notes=tuple(notes),
    )


def _check_outcome(result: RunResult, metric: Metric, threshold: float) -> StepOutcome:
    outcome = classify(_main_comparisons(result, metric, "base", "head"), threshold)
    if outcome is None:
        return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason="not measured")
    return replace(outcome, run_id=result.run_id)


def _no_change(head: str, compared: ResolvedRef) -> ConfigError:
    return ConfigError(
        f"{head} is the base itself ({compared.short}): there is no change to check",
        hint="run it on a branch with commits after the base, or give --base REF",
    )


def _resolve_base(
    runner: SubprocessRunner, repo: str, base_ref: str, *, from_ci: bool
) -> ResolvedRef:
    try:
        return resolve_ref(runner, repo, base_ref)
    except GitError:
        raise GitError(
            f"the base ref {base_ref!r} is not in this clone"
            + (" (found from the CI's variables)" if from_ci else ""),
            hint=_fetch_hint(base_ref, run_git(runner, repo, "remote").stdout.split()),
        ) from None


def _merge_base(
    runner: SubprocessRunner,
    repo: str,
    base_ref: str,
    base: ResolvedRef,
    head_ref: str,
    head: ResolvedRef,
    notes: list[str],
) -> ResolvedRef:
    """The merge base of BASE and HEAD; a note says when it is not BASE's tip."""
    found = run_git(runner, repo, "merge-base", base.commit, head.commit)
    if not found.ok or not found.stdout.strip():
        raise GitError(
            f"{base_ref} and {head_ref} have no common commit in this clone (a shallow clone "
            "holds only the newest commits)",
            hint="fetch the history: git fetch --unshallow (GitHub Actions: actions/checkout "
            "with fetch-depth: 0; GitLab CI: GIT_DEPTH: 0), or compare with the base itself: "
            "--no-merge-base",
        )
    compared = resolve_ref(runner, repo, found.stdout.strip())
    if compared.commit != base.commit:
        notes.append(
            f"compared with the merge base of {base_ref} and {head_ref} ({compared.short}), "
            f"not {base_ref}'s tip: only this change's own effect is measured"
        )
    return compared


def _check_metric(environ: Mapping[str, str], notes: list[str]) -> Metric:
    """The instructions lens on a shared CI runner (when valgrind is there), else time."""
    runner_variable = shared_runner(environ)
    if runner_variable is None or not instructions_available():
        return Metric.TIME
    notes.append(
        f"the instructions lens ({runner_variable} is set): shared CI runners share "
        "CPUs with other jobs, so wall time there is noise; instruction counts are "
        "deterministic (give --metric time on a dedicated runner)"
    )
    return Metric.INSTRUCTIONS


def _measure_change(
    benchmark: Benchmarked,
    repo: str,
    metric: Metric,
    base: ResolvedRef,
    head: ResolvedRef,
    uncommitted: str,
    notes: list[str],
) -> RunResult:
    """`base` against `head`, with the working tree's uncommitted patch applied to `head`."""
    with private_folder("check") as folder:
        apply: tuple[str, ...] = ()
        if uncommitted:
            patch = Path(folder) / WORKING_TREE_PATCH
            patch.write_text(uncommitted)
            apply = (str(patch),)
            notes.append(
                f"the working tree: HEAD ({head.short}) with its uncommitted changes to "
                "tracked files (git diff HEAD); untracked files are not included (git add -N "
                "FILE includes one), and --head HEAD measures HEAD as committed"
            )
        variants = [
            Variant(name="base", git=base.commit),
            Variant(name="head", git=head.commit, apply=apply),
        ]
        return benchmark.run(benchmark.experiment(variants, metrics=(metric,)), repo)


# ---- history: one result per commit, change points


INDEX_NAME = "history-index.json"


def _history_key(benchmark: Benchmarked, tree: str, metric: Metric) -> str:
    import hashlib

    identity = json.dumps(
        [tree, benchmark.stmt, benchmark.setup, benchmark.cmd, benchmark.build,
         benchmark.each, str(metric)]
    )  # fmt: skip
    return hashlib.sha256(identity.encode()).hexdigest()


def _index_path(store_path: str | Path | None) -> Path | None:
    """Beside an SQLite store; for a PostgreSQL store, in this machine's default store folder
    (a URL has no folder: each machine keeps its own index of the team store's runs)."""
    if store_path is None:
        return None
    if is_postgresql(store_path):
        return DEFAULT_STORE_PATH.parent / INDEX_NAME
    return Path(store_path).parent / INDEX_NAME


def _load_index(path: Path | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}  # an index is derived from the stored runs: a broken one is measured again
    return data if isinstance(data, dict) else {}


def _save_index(path: Path | None, index: Mapping[str, Any]) -> None:
    if path is None:
        return
    make_store_folder(path.parent)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, path)


def history(
    range_text: str,
    *,
    benchmark: Benchmarked,
    every: int = 1,
    threshold: float = 0.02,
    metric: Metric | None = None,
    repository: str | Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> HistoryResult:
    """One result per commit of RANGE's first-parent line (its base included; every `every`th
    commit counted back from the tip), each kept and reused by tree, benchmark and lens;
    change points of the series, each checked by a direct comparison of the commits either
    side."""
    started = clock()
    if every < 1:
        raise ConfigError(f"--every must be 1 or more, got {every}", hint="e.g. --every 4")
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    line = _range_line(runner, repo, range_text)
    chosen = metric or (Metric.INSTRUCTIONS if instructions_available() else Metric.TIME)
    notes = [] if metric is not None else [_history_lens_note(chosen)]
    index_path = _index_path(benchmark.store_path)
    index = _load_index(index_path)
    points, wanted = _known_points(
        benchmark, runner, repo, chosen, line[::-1][::every][::-1], index
    )
    if wanted:
        _measure_points(benchmark, repo, chosen, points, wanted, index)
        _save_index(index_path, index)
    valued = [i for i, p in enumerate(points) if p.value is not None]
    if not valued:
        raise _nothing_measured(range_text, points)
    placed, placed_note = placed_history_points(points, benchmark.store_path, chosen)
    points, notes = list(placed), notes + ([placed_note] if placed_note else [])
    changes = _history_changes(
        benchmark, repo, chosen, threshold, points, valued, index, index_path
    )
    return HistoryResult(
        range_text=range_text,
        metric=chosen,
        threshold=threshold,
        points=tuple(points),
        changes=_with_unmeasured_between(changes, line),
        measured_now=len(wanted),
        seconds=clock() - started,
        notes=tuple(notes),
    )


def _range_line(runner: SubprocessRunner, repo: str, range_text: str) -> list[tuple[str, str]]:
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
    benchmark: Benchmarked,
    runner: SubprocessRunner,
    repo: str,
    metric: Metric,
    commits: list[tuple[str, str]],
    index: Mapping[str, Any],
) -> tuple[list[HistoryPoint], dict[str, list[int]]]:
    """A point per commit, valued from the index where its tree was measured before; and for
    each key still to measure, the indices of the points that need it."""
    points: list[HistoryPoint] = []
    wanted: dict[str, list[int]] = {}
    for commit, subject in commits:
        tree = resolve_ref(runner, repo, commit).tree
        key = _history_key(benchmark, tree, metric)
        known = index.get(key)
        if isinstance(known, dict) and known.get("value") is not None:
            points.append(
                HistoryPoint(
                    commit,
                    subject,
                    tree,
                    float(known["value"]),
                    str(known.get("unit", "")),
                    known.get("run_id"),
                    reused=True,
                )
            )
        else:
            points.append(HistoryPoint(commit, subject, tree))
            wanted.setdefault(key, []).append(len(points) - 1)
    return points, wanted


def _measure_points(
    benchmark: Benchmarked,
    repo: str,
    metric: Metric,
    points: list[HistoryPoint],
    wanted: Mapping[str, list[int]],
    index: dict[str, Any],
) -> None:
    """Measures each wanted commit in one run, fills its points in and records it in the index."""
    names = {key: f"c{points[at[0]].commit[:10]}" for key, at in wanted.items()}
    variants = [Variant(name=names[key], git=points[at[0]].commit) for key, at in wanted.items()]
    if len(variants) == 1:  # an experiment compares: the one new commit against itself
        variants.append(Variant(name=variants[0].name + "-again", git=variants[0].git))
    pairs = [(variants[0].name, v.name) for v in variants[1:]]
    pairs += [(a.name, b.name) for a, b in zip(variants[1:], variants[2:], strict=False)]
    experiment = replace(
        benchmark.experiment(variants, metrics=(metric,)), pairs=tuple(dict.fromkeys(pairs))
    )
    result = benchmark.run(experiment, repo)
    values: dict[str, tuple[float, str]] = {}
    for c in result.comparisons:
        if c.metric is metric and c.event is None:
            values.setdefault(c.baseline, (c.baseline_value, c.unit))
            values.setdefault(c.variant, (c.variant_value, c.unit))
    failed = {f.variant: f.message for f in result.failures if f.variant}
    for key, at in wanted.items():
        name = names[key]
        for i in at:
            point = points[i]
            if name in values:
                value, unit = values[name]
                points[i] = replace(point, value=value, unit=unit, run_id=result.run_id)
                index[key] = {
                    "value": value,
                    "unit": unit,
                    "run_id": result.run_id,
                    "commit": point.commit,
                    "tree": point.tree,
                }
            else:
                why = failed.get(name) or "nothing was measured"
                points[i] = replace(point, run_id=result.run_id, skipped=why)


def _nothing_measured(range_text: str, points: list[HistoryPoint]) -> BenchmarkFailedError:
    reasons = sorted({p.skipped for p in points if p.skipped})
    return BenchmarkFailedError(
        f"no commit of {range_text} could be built and measured ({len(points)} tried)",
        hint="fix the build command or the benchmark (the first reason is below); the runs "
        "are kept in the store",
        detail=reasons[0] if reasons else None,
    )


def _history_changes(
    benchmark: Benchmarked,
    repo: str,
    metric: Metric,
    threshold: float,
    points: list[HistoryPoint],
    valued: list[int],
    index: dict[str, Any],
    index_path: Path | None,
) -> list[HistoryChange]:
    """The series' change points, each confirmed by a direct comparison (or its earlier one)."""
    series = [points[i].series_value or 0.0 for i in valued]
    changes: list[HistoryChange] = []
    for found in change_points(series, min_step=threshold):
        after = points[valued[found.index]]
        before = points[valued[found.index - 1]]
        key = "confirm:" + _history_key(benchmark, before.tree + ".." + after.tree, metric)
        known = index.get(key)
        if isinstance(known, dict):
            changes.append(
                HistoryChange(
                    valued[found.index], before, after, found.ratio, known.get("ratio"),
                    known.get("ci_low"), known.get("ci_high"), bool(known.get("confirmed")),
                    known.get("run_id"), reused=True,
                )
            )  # fmt: skip
            continue
        change = _confirm(
            benchmark, repo, metric, threshold, valued[found.index], before, after, found.ratio
        )
        changes.append(change)
        if change.ratio is not None:
            index[key] = {
                "ratio": change.ratio,
                "ci_low": change.ci_low,
                "ci_high": change.ci_high,
                "confirmed": change.confirmed,
                "run_id": change.run_id,
            }
            _save_index(index_path, index)
    return changes


def _confirm(
    benchmark: Benchmarked,
    repo: str,
    metric: Metric,
    threshold: float,
    index: int,
    before: HistoryPoint,
    after: HistoryPoint,
    series_ratio: float,
) -> HistoryChange:
    """The commits either side of a change point, compared directly in one interleaved run."""
    experiment = benchmark.experiment(
        [Variant(name="before", git=before.commit), Variant(name="after", git=after.commit)],
        metrics=(metric,),
    )
    result = benchmark.run(experiment, repo)
    found = _main_comparisons(result, metric, "before", "after")
    if not found:
        return HistoryChange(
            index, before, after, series_ratio, None, None, None, False, result.run_id,
            result=result,
        )  # fmt: skip
    c = found[0]
    limit = 1.0 + threshold
    confirmed = (c.ci_low > limit) if series_ratio > 1 else (c.ci_high < 1.0 / limit)
    return HistoryChange(
        index, before, after, series_ratio, c.ratio, c.ci_low, c.ci_high, confirmed,
        result.run_id, result=result,
    )  # fmt: skip
