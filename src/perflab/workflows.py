"""A team's workflows over a repository's history, built on experiments of git= variants:
`bisect` (find the commit), `check` (a CI gate against the merge base) and `history` (one
result per commit, with change points). Every measurement is an ordinary run, kept in the
store; these functions plan the runs and read their comparisons."""

from __future__ import annotations

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
from perflab.analyse.same_work import gate_disagreement
from perflab.engine.measured import MeasuredCode, StoredPair
from perflab.engine.prepare.git_prepare import WORKING_TREE_PATCH
from perflab.git.repo import (
    GitError,
    ResolvedRef,
    dirty_summary,
    find_repository,
    first_parent_line,
    merged_branch,
    resolve_ref,
    run_git,
    split_range,
    working_tree_patch,
)
from perflab.machine.proc import SubprocessRunner
from perflab.machine.scratch import private_folder
from perflab.plan.bisect_search import classify, search
from perflab.plan.config import parse_metrics
from perflab.records.bisect import (
    BisectResult,
    BisectStep,
    Commit,
    Direction,
    SearchOutcome,
    StepOutcome,
    StepState,
)
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.model import Experiment, Metric, Settings, Variant, Verdict
from perflab.records.results import RunResult
from perflab.records.workflow_results import (
    BASE_VARIABLES,
    CheckResult,
    HistoryChange,
    HistoryPoint,
    HistoryResult,
    SuiteHistory,
    base_words,
)
from perflab.stats.changepoints import change_points
from perflab.store.sqlite import DEFAULT_STORE_PATH


@dataclass(frozen=True)
class Suite:
    """A suite the workflow measures whole, as `run` does: its benchmarks listed in the current
    directory (the repository's root), each run in every commit's checkout."""

    pytest: str | None = None
    pytest_filter: str | None = None
    asv: str | None = None
    asv_filter: str | None = None
    gbench: str | None = None
    gbench_filter: str | None = None

    def arguments(self) -> dict[str, Any]:
        """make_experiment's keyword arguments for the suite (those given)."""
        given = {
            "pytest": self.pytest,
            "pytest_filter": self.pytest_filter,
            "asv": self.asv,
            "asv_filter": self.asv_filter,
            "gbench": self.gbench,
            "gbench_filter": self.gbench_filter,
        }
        return {key: value for key, value in given.items() if value is not None}


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
    suite: Suite | None = None

    def experiment(
        self, variants: list[Variant], *, metrics: tuple[Metric, ...], budget_scale: float = 1.0
    ) -> Experiment:
        settings = dict(self.settings or {})
        settings["metrics"] = ",".join(m.value for m in metrics)
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
            **(self.suite.arguments() if self.suite is not None else {}),
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


# the lenses a workflow is given, as `run` takes them: a lens, "time,instructions", or a list
Lenses = str | Sequence[str] | None


def given_lenses(metric: Lenses, benchmark: Benchmarked) -> tuple[Metric, ...]:
    """The lenses asked for, parsed as `run` parses --metric: `metric`, else the benchmark's
    `metrics` setting; the first decides, the others are evidence. (): none was given, the
    workflow chooses."""
    chosen = metric if metric is not None else (benchmark.settings or {}).get("metrics")
    return () if chosen is None else parse_metrics(chosen)


def evidence_lenses(decider: Metric, given: Sequence[Metric]) -> tuple[Metric, ...]:
    """The lenses a workflow's answer is measured with: the deciding one, the others given,
    and time and instructions beside them (instructions where valgrind is installed), so an
    answer says when the two disagree."""
    both = (Metric.TIME, Metric.INSTRUCTIONS) if instructions_available() else (Metric.TIME,)
    return tuple(dict.fromkeys((decider, *given, *both)))


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
    metric: Lenses = None,
    direction: Direction | str = Direction.SLOWER,
    repository: str | Path | None = None,
    on_step: Callable[[BisectStep, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> BisectResult:
    """The first commit on BAD's first-parent line after GOOD that differs from GOOD by more
    than `threshold` in `direction` (slower by default; faster, or changed either way), by
    the first lens of `metric` (one lens, "time,instructions" or a list). When that commit is
    a merge, the search goes on inside the branch it merged (its second parent's line after
    the merge base), so the answer is the innermost commit. Steps the store holds already
    are read, not measured again. The culprit against its parent is measured with every lens
    given, and time and instructions. Without `metric`, the instructions lens
    (deterministic) is tried first and the time lens used when instructions do not show the
    change."""
    started = clock()
    lenses = given_lenses(metric, benchmark)
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    good_ref = resolve_ref(runner, repo, good)
    bad_ref = resolve_ref(runner, repo, bad)
    line = tuple(Commit(c, s) for c, s in first_parent_line(runner, repo, good_ref, bad_ref))
    sought = Direction(direction)
    steps = _BisectSteps(
        benchmark, repo, line, good_ref, threshold, sought, on_step, _measured(benchmark)
    )
    chosen, prior, outcome, notes = _search_with_a_lens(steps, lenses[0] if lenses else None)
    found = _Found(prior + outcome.steps)
    if outcome.culprit is not None:
        found = _inside_merges(steps, chosen, runner, outcome.culprit, found)
    evidence: RunResult | None = None
    names = ("parent", "culprit")
    if found.culprit is not None and found.parent is not None:
        evidence, names = _culprit_evidence(
            steps, found.parent, found.culprit, evidence_lenses(chosen, lenses)
        )
    return BisectResult(
        good=Commit(good_ref.commit, good_ref.subject),
        bad=Commit(bad_ref.commit, bad_ref.subject),
        metric=chosen,
        threshold=threshold,
        line=line,
        steps=found.steps,
        culprit=found.culprit,
        candidates=tuple(line[i] for i in outcome.candidates),
        stopped=outcome.stopped,
        seconds=clock() - started,
        evidence_run=evidence.run_id if evidence is not None else None,
        notes=tuple(notes),
        evidence=evidence,
        disagreement=(
            gate_disagreement(evidence.comparisons, chosen, names, threshold)
            if evidence is not None
            else None
        ),
        direction=sought,
        merges=found.merges,
        not_inside=found.not_inside,
        parent=found.parent,
    )


@dataclass(frozen=True)
class _Found:
    """Where the search has got to: its steps, the commit found so far and its first parent,
    the merges gone inside, and why it could not go further in."""

    steps: tuple[BisectStep, ...]
    culprit: Commit | None = None
    parent: Commit | None = None
    merges: tuple[Commit, ...] = ()
    not_inside: str = ""


@dataclass(frozen=True)
class _BisectSteps:
    """One bisect step: a commit of the line measured against GOOD (or read from the store's
    run of the same two commits), reported to `on_step`."""

    benchmark: Benchmarked
    repo: str
    line: tuple[Commit, ...]
    good: ResolvedRef
    threshold: float
    direction: Direction
    on_step: Callable[[BisectStep, int], None] | None
    measured: MeasuredCode
    inside: str = ""  # the merge whose branch `line` is

    def search(self, metric: Metric) -> SearchOutcome:
        found = search(
            self.line,
            lambda index, attempt: self._step(metric, index, attempt),
            direction=self.direction,
        )
        if not self.inside:
            return found
        return replace(found, steps=tuple(replace(s, inside=self.inside) for s in found.steps))

    def _step(self, metric: Metric, index: int, attempt: int) -> StepOutcome:
        outcome = self._stored(metric, index) or self._measure(metric, index, attempt)
        if self.on_step is not None:
            commit = self.line[index]
            self.on_step(
                BisectStep(index, commit.commit, commit.subject, outcome, attempt, self.inside),
                len(self.line),
            )
        return outcome

    def _stored(self, metric: Metric, index: int) -> StepOutcome | None:
        """The step as a run the store holds says it, when that run settled it."""
        stored = self.measured.pair(self.good.commit, self.line[index].commit, (metric,))
        if stored is None:
            return None
        comparisons = _main_comparisons(stored.result, metric, stored.before, stored.after)
        outcome = classify(comparisons, self.threshold, self.direction)
        if outcome is None or outcome.state not in (StepState.GOOD, StepState.BAD):
            return None  # not settled: measured again, with more budget when it needs it
        return replace(outcome, run_id=stored.result.run_id, reused=True)

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
        outcome = classify(
            _main_comparisons(result, metric, "good", name), self.threshold, self.direction
        )
        if outcome is None:
            reason = failed[name].message if name in failed else "nothing was measured"
            return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason=reason)
        return replace(outcome, run_id=result.run_id)


def _search_with_a_lens(
    steps: _BisectSteps, metric: Metric | None
) -> tuple[Metric, tuple[BisectStep, ...], SearchOutcome, list[str]]:
    """The search with `metric`; without one, with instructions first and time where the
    instructions do not show the change (whose steps are kept as `prior`)."""
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
            f"instructions did not show the change sought (BAD/GOOD {first.ratio:.3f}): "
            "bisecting with the time lens"
        ]
        return Metric.TIME, outcome.steps, steps.search(Metric.TIME), notes
    notes = [
        "bisecting with the instructions lens: deterministic counts answer each step "
        "without noise (give --metric time to bisect wall time)"
    ]
    return Metric.INSTRUCTIONS, (), outcome, notes


def _inside_merges(
    steps: _BisectSteps,
    metric: Metric,
    runner: SubprocessRunner,
    culprit: int,
    found: _Found,
) -> _Found:
    """The culprit on BAD's first-parent line; where it is a merge, the search goes on along
    the branch it merged (the merged branch's commits compared with GOOD, as every step is),
    again while the commit found is a merge."""
    line, index = steps.line, culprit
    parent = line[index - 1] if index > 0 else Commit(steps.good.commit, steps.good.subject)
    found = replace(found, culprit=line[index], parent=parent)
    assert found.culprit is not None
    while (merged := merged_branch(runner, steps.repo, found.culprit.commit)) is not None:
        merge, (base, second) = found.culprit, merged
        by_hand = _by_hand(steps, base, second, metric)
        base_ref = resolve_ref(runner, steps.repo, base)
        if base == second:  # the branch was in the first parent already
            return replace(found, not_inside=f"the merge {merge.short} merged no new commit")
        second_ref = resolve_ref(runner, steps.repo, second)
        inner = tuple(
            Commit(c, s) for c, s in first_parent_line(runner, steps.repo, base_ref, second_ref)
        )
        inside = replace(steps, line=inner, inside=merge.commit)
        outcome = inside.search(metric)
        found = replace(found, steps=found.steps + outcome.steps)
        if outcome.culprit is None:
            left = ", ".join(f"{inner[i].short} {inner[i].subject}" for i in outcome.candidates)
            why = outcome.stopped + (f" ({left})" if left else "")
            return replace(
                found,
                not_inside=f"inside the merge {merge.short}, the search could not go on: {why}; "
                f"to look inside it by hand: {by_hand}",
            )
        index = outcome.culprit
        parent_commit = inner[index - 1] if index > 0 else Commit(base, base_ref.subject)
        found = replace(
            found, culprit=inner[index], parent=parent_commit, merges=(*found.merges, merge)
        )
    return found


def _by_hand(steps: _BisectSteps, base: str, second: str, metric: Metric) -> str:
    """The command that bisects a merged branch with this bisection's benchmark."""
    b = steps.benchmark
    words = ["perflab", "bisect", base[:10], second[:10]]
    for flag, value in (("--cmd", b.cmd), ("--stmt", b.stmt), ("--setup", b.setup),
                        ("--build", b.build), ("--each", b.each)):  # fmt: skip
        if value is not None:
            words += [flag, value]
    words += ["--metric", str(metric), "--threshold", f"{steps.threshold:.4g}"]
    if steps.direction is not Direction.SLOWER:
        words.append(f"--{steps.direction}")
    return " ".join(shlex.quote(w) for w in words) + " (with your other options)"


def _culprit_evidence(
    steps: _BisectSteps, parent: Commit, culprit: Commit, metrics: tuple[Metric, ...]
) -> tuple[RunResult, tuple[str, str]]:
    """The culprit against its parent, with `metrics` (the deciding lens first): the store's
    run of the two, or a new one; and the names of the two variants in it."""
    stored = steps.measured.pair(parent.commit, culprit.commit, metrics)
    if stored is not None:
        return stored.result, (stored.before, stored.after)
    experiment = steps.benchmark.experiment(
        [Variant(name="parent", git=parent.commit), Variant(name="culprit", git=culprit.commit)],
        metrics=metrics,
    )
    return steps.benchmark.run(experiment, steps.repo), ("parent", "culprit")


# ---- check: a CI gate


SHARED_RUNNER_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "CI")


def default_base(environ: Mapping[str, str]) -> tuple[str, str]:
    """The base a pull request targets and where it came from: the CI variable that names it,
    else `origin/HEAD`, "the default"."""
    for variable in BASE_VARIABLES:
        if environ.get(variable):
            return f"origin/{environ[variable]}", variable
    return "origin/HEAD", "the default"


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
    metric: Lenses = None,
    merge_base: bool = True,
    repository: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CheckResult:
    """`head` against the merge base of `base` and `head` (or `base` itself): a regression is
    a ratio whose whole CI is above 1 + threshold. Without `head`: the working tree, that is
    HEAD with its uncommitted changes to tracked files applied (HEAD alone when it is clean).
    The first lens of `metric` gates, the others are measured beside it. On a CI runner
    without `metric`, the instructions lens gates (deterministic; shared runners make wall
    time noise) and the time lens is measured beside it."""
    environ = os.environ if environ is None else environ
    given = given_lenses(metric, benchmark)
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    base_ref, base_from = (base, "--base") if base else default_base(environ)
    working_tree = head is None
    head = head or "HEAD"
    notes: list[str] = []
    base_commit = _resolve_base(runner, repo, base_ref, base_from)
    head_commit = resolve_ref(runner, repo, head)
    compared = base_commit
    if merge_base:
        compared = _merge_base(runner, repo, base_ref, base_commit, head, head_commit, notes)
    lenses = given or _check_lenses(environ, benchmark, notes)
    uncommitted = _uncommitted(runner, repo) if working_tree else ""
    if compared.commit == head_commit.commit and not uncommitted:
        raise _no_change(head, compared)
    result = _measure_change(benchmark, repo, lenses, compared, head_commit, uncommitted, notes)
    chosen = lenses[0]
    outcome = _check_outcome(result, chosen, threshold)
    disagreement = gate_disagreement(result.comparisons, chosen, ("base", "head"), threshold)
    return CheckResult(
        base_ref=base_ref,
        base=Commit(compared.commit, compared.subject),
        head=Commit(head_commit.commit, head_commit.subject),
        working_tree=bool(uncommitted),
        metric=chosen,
        threshold=threshold,
        outcome=outcome,
        result=result,
        notes=tuple(notes),
        lenses=lenses,
        disagreement=disagreement,
        overruled=not given and _time_overrules(outcome, disagreement),
        base_from=base_from,
        regressed=regressed_benchmarks(result, chosen, threshold),
    )


def regressed_benchmarks(result: RunResult, metric: Metric, threshold: float) -> tuple[str, ...]:
    """The benchmarks whose head is worse than the base beyond `threshold` over its whole
    interval, worst first: the suite's comparisons are decided together (the run's family),
    so each one named is a claim at the family's confidence."""
    limit = 1.0 + threshold
    worse = [
        c
        for c in _main_comparisons(result, metric, "base", "head")
        if c.verdict is not Verdict.INVALID and c.ci_low > limit
    ]
    return tuple(c.benchmark for c in sorted(worse, key=lambda c: -c.ratio))


def _uncommitted(runner: SubprocessRunner, repo: str) -> str:
    """The working tree's uncommitted changes to tracked files as a patch ("" when clean)."""
    return working_tree_patch(runner, repo) if dirty_summary(runner, repo) is not None else ""


def _time_overrules(outcome: StepOutcome, disagreement: LensDisagreement | None) -> bool:
    """The CI's default gate stands in instructions for time, for their determinism: where the
    time lens beside them says decisively faster, a confirmed rise in instructions is the
    stand-in misleading (a branch removed for a few more instructions), not a regression."""
    return (
        outcome.state is StepState.BAD
        and disagreement is not None
        and disagreement.other is Metric.TIME
        and disagreement.decisively_faster
    )


def _check_outcome(result: RunResult, metric: Metric, threshold: float) -> StepOutcome:
    outcome = classify(_main_comparisons(result, metric, "base", "head"), threshold)
    if outcome is None:
        reasons = "; ".join(f"{f.variant}: {f.message}" for f in result.failures)
        reason = reasons or "the lens compared nothing"
        return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason=reason)
    return replace(outcome, run_id=result.run_id)


def _no_change(head: str, compared: ResolvedRef) -> ConfigError:
    return ConfigError(
        f"{head} is the base itself ({compared.short}): there is no change to check",
        hint="run it on a branch with commits after the base, or give --base REF",
    )


def _resolve_base(
    runner: SubprocessRunner, repo: str, base_ref: str, base_from: str
) -> ResolvedRef:
    try:
        return resolve_ref(runner, repo, base_ref)
    except GitError:
        raise GitError(
            f"the base ref {base_ref!r} is not in this clone ({base_words(base_from)})",
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


def _check_lenses(
    environ: Mapping[str, str], benchmark: Benchmarked, notes: list[str]
) -> tuple[Metric, ...]:
    """On a shared CI runner (when valgrind is there) the instructions lens gates, with the
    time lens beside it unless --strict-budget holds the budget to instructions alone; time
    elsewhere."""
    runner_variable = shared_runner(environ)
    if runner_variable is None or not instructions_available():
        return (Metric.TIME,)
    notes.append(
        f"the instructions lens gates ({runner_variable} is set): shared CI runners share "
        "CPUs with other jobs, so wall time there is noise; instruction counts are "
        "deterministic (give --metric time on a dedicated runner)"
    )
    if (benchmark.settings or {}).get("strict_budget"):
        notes.append(
            "the time lens is not measured beside instructions: --strict-budget holds the "
            "budget to the gate's lens (--metric instructions,time measures both)"
        )
        return (Metric.INSTRUCTIONS,)
    notes.append(
        "the time lens is measured beside it: a change it says is decisively faster does not "
        "fail on instructions alone (--metric instructions gates by instructions alone)"
    )
    return (Metric.INSTRUCTIONS, Metric.TIME)


def _measure_change(
    benchmark: Benchmarked,
    repo: str,
    metrics: tuple[Metric, ...],
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
                f"head is the working tree: HEAD ({head.short}) with its uncommitted changes "
                "to tracked files applied (git diff HEAD; an untracked file after git add -N "
                "FILE), the base as committed; --head HEAD measures HEAD as committed"
            )
        variants = [
            Variant(name="base", git=base.commit),
            Variant(name="head", git=head.commit, apply=apply),
        ]
        return benchmark.run(benchmark.experiment(variants, metrics=metrics), repo)


# ---- history: one result per commit, change points


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
    started = clock()
    plan = _HistoryPlan.made(range_text, benchmark, every, metric, repository)
    points, wanted = _known_points(plan, None)
    if wanted:
        result, names = _measure_trees(benchmark, plan, wanted)
        _fill_points(points, wanted, result, names, plan.chosen, None)
    found = _series(plan, threshold, points, None, {})
    return replace(found, measured_now=len(wanted), seconds=clock() - started)


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
    started = clock()
    plan = _HistoryPlan.made(range_text, benchmark, every, metric, repository)
    known = {name: _known_points(plan, name) for name in plan.benchmarks}
    wanted = {tree: at for _, missing in known.values() for tree, at in missing.items()}
    if wanted:
        result, names = _measure_trees(benchmark, plan, wanted)
        for name, (points, missing) in known.items():
            _fill_points(points, missing, result, names, plan.chosen, name)
    if all(p.value is None for points, _ in known.values() for p in points):
        raise _nothing_measured(range_text, [p for points, _ in known.values() for p in points])
    compared: dict[tuple[str, str], StoredPair] = {}
    series = [
        replace(_series(plan, threshold, points, name, compared), measured_now=len(missing))
        for name, (points, missing) in known.items()
    ]
    seconds = clock() - started
    return SuiteHistory(
        range_text=range_text,
        metric=plan.chosen,
        threshold=threshold,
        series=tuple(replace(s, seconds=seconds) for s in series),
        measured_now=len(wanted),
        seconds=seconds,
        notes=tuple(plan.notes),
    )


@dataclass(frozen=True)
class _HistoryPlan:
    """What a history measures: the commits, the lens of the series, what the store holds."""

    benchmark: Benchmarked
    repo: str
    range_text: str
    line: list[tuple[str, str]]  # RANGE's base and first-parent line, oldest first
    commits: list[tuple[str, str, str]]  # (commit, subject, tree) of those measured
    chosen: Metric
    lenses: tuple[Metric, ...]
    notes: tuple[str, ...]
    measured: MeasuredCode
    benchmarks: tuple[str, ...]  # the benchmarks' names, as listed now

    @classmethod
    def made(
        cls,
        range_text: str,
        benchmark: Benchmarked,
        every: int,
        metric: Lenses,
        repository: str | Path | None,
    ) -> _HistoryPlan:
        if every < 1:
            raise ConfigError(f"--every must be 1 or more, got {every}", hint="e.g. --every 4")
        lenses = given_lenses(metric, benchmark)
        runner = SubprocessRunner()
        repo = str(repository) if repository else find_repository(runner, os.getcwd())
        line = _range_line(runner, repo, range_text)
        default = Metric.INSTRUCTIONS if instructions_available() else Metric.TIME
        chosen = lenses[0] if lenses else default
        commits = [
            (commit, subject, resolve_ref(runner, repo, commit).tree)
            for commit, subject in line[::-1][::every][::-1]
        ]
        planned = _planned(benchmark)
        return cls(
            benchmark=benchmark,
            repo=repo,
            range_text=range_text,
            line=line,
            commits=commits,
            chosen=chosen,
            lenses=lenses,
            notes=() if lenses else (_history_lens_note(chosen),),
            measured=MeasuredCode.read(benchmark.store_path, planned),
            benchmarks=tuple(b.name for b in planned.benchmarks),
        )


def _series(
    plan: _HistoryPlan,
    threshold: float,
    points: list[HistoryPoint],
    name: str | None,
    compared: dict[tuple[str, str], StoredPair],
) -> HistoryResult:
    """One benchmark's series (`name`; None: the first's), placed by node, its change points
    confirmed by direct comparisons (`compared`: those measured already in this history). A
    series with no value is an error alone; a suite's benchmark that failed everywhere is a
    series of skipped points beside the others."""
    valued = [i for i, p in enumerate(points) if p.value is not None]
    if not valued and name is None:
        raise _nothing_measured(plan.range_text, points)
    chosen = plan.chosen
    placed, placed_note = placed_history_points(points, plan.benchmark.store_path, chosen)
    points = list(placed)
    notes = (*plan.notes, *([placed_note] if placed_note else []))
    changes = _history_changes(
        plan, evidence_lenses(chosen, plan.lenses), threshold, points, valued, name, compared
    )
    return HistoryResult(
        range_text=plan.range_text,
        metric=chosen,
        threshold=threshold,
        points=tuple(points),
        changes=_with_unmeasured_between(changes, plan.line),
        measured_now=0,
        seconds=0.0,
        notes=notes,
        benchmark=name,
    )


def _planned(benchmark: Benchmarked) -> Experiment:
    """The benchmark's experiment as any two commits measure it (a suite: listed now)."""
    variants = [Variant(name="a", git="HEAD"), Variant(name="b", git="HEAD")]
    return benchmark.experiment(variants, metrics=(Metric.TIME,))


def _measured(benchmark: Benchmarked) -> MeasuredCode:
    """What the benchmark's store already holds of this benchmark and its settings (of any
    lens: each figure read is asked for by lens)."""
    return MeasuredCode.read(benchmark.store_path, _planned(benchmark))


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


def _measure_trees(
    benchmark: Benchmarked, plan: _HistoryPlan, wanted: Mapping[str, list[int]]
) -> tuple[RunResult, dict[str, str]]:
    """Measures each wanted tree (at the first of its commits) in one run: the run, and the
    name of each tree's variant in it."""
    commit_of = {tree: plan.commits[at[0]][0] for tree, at in wanted.items()}
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
    values: dict[str, tuple[float, str]] = {}
    for c in result.comparisons:
        if c.metric is metric and c.event is None and benchmark_name in (None, c.benchmark):
            values.setdefault(c.baseline, (c.baseline_value, c.unit))
            values.setdefault(c.variant, (c.variant_value, c.unit))
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
    plan: _HistoryPlan,
    metrics: tuple[Metric, ...],
    threshold: float,
    points: list[HistoryPoint],
    valued: list[int],
    name: str | None,
    compared: dict[tuple[str, str], StoredPair],
) -> list[HistoryChange]:
    """The series' change points, each confirmed by a direct comparison measured with
    `metrics`, the series' lens first (one the store holds already, one this history measured
    for another benchmark, or a new run)."""
    series = [points[i].series_value or 0.0 for i in valued]
    changes: list[HistoryChange] = []
    for found in change_points(series, min_step=threshold):
        after = points[valued[found.index]]
        before = points[valued[found.index - 1]]
        stored = compared.get((before.tree, after.tree)) or plan.measured.pair(
            before.tree, after.tree, metrics
        )
        reused = stored is not None
        if stored is None:
            variants = [Variant(name="before", git=before.commit),
                        Variant(name="after", git=after.commit)]  # fmt: skip
            benchmark = plan.benchmark
            result = benchmark.run(benchmark.experiment(variants, metrics=metrics), plan.repo)
            stored = StoredPair(result, "before", "after")
            compared[(before.tree, after.tree)] = stored
        change = confirmed_change(stored, metrics[0], threshold, valued[found.index], before, after,
                            found.ratio, benchmark=name)  # fmt: skip
        changes.append(replace(change, reused=reused))
    return changes


def confirmed_change(
    stored: StoredPair,
    metric: Metric,
    threshold: float,
    index: int,
    before: HistoryPoint,
    after: HistoryPoint,
    series_ratio: float,
    *,
    benchmark: str | None = None,
) -> HistoryChange:
    """What the direct comparison of the commits either side of a change point says (of
    `benchmark` in it; None: its first)."""
    result = stored.result
    names = (stored.before, stored.after)
    of = [c for c in result.comparisons if benchmark in (None, c.benchmark)]
    found = [
        c for c in _main_comparisons(result, metric, *names) if benchmark in (None, c.benchmark)
    ]
    disagreement = gate_disagreement(of, metric, names, threshold)
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
        result.run_id, result=result, disagreement=disagreement,
    )  # fmt: skip
