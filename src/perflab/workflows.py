"""A team's workflows over a repository's history, built on experiments of git= variants:
`bisect` (find the commit), `check` (a CI gate against the merge base) and `history` (one
result per commit, with change points). Every measurement is an ordinary run, kept in the
store; these functions plan the runs and read their comparisons."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab import api
from perflab.bisect import (
    BisectResult,
    BisectStep,
    Commit,
    StepOutcome,
    StepState,
    classify,
    search,
)
from perflab.errors import ConfigError, PerflabError
from perflab.git.repo import GitError, find_repository, first_parent_line, resolve_ref
from perflab.model import Experiment, Metric, Settings, Variant
from perflab.proc import SubprocessRunner
from perflab.results import RunResult
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
    notes: list[str] = []

    def measure_with(chosen: Metric) -> Callable[[int, int], StepOutcome]:
        def measure(index: int, attempt: int) -> StepOutcome:
            commit = line[index]
            name = commit.short
            experiment = benchmark.experiment(
                [Variant(name="good", git=good_ref.commit), Variant(name=name, git=commit.commit)],
                metrics=(chosen,),
                budget_scale=2.0 ** (attempt - 1),
            )
            result = benchmark.run(experiment, repo)
            failed = {f.variant: f for f in result.failures}
            if "good" in failed:
                raise GitError(
                    f"GOOD ({good_ref.ref}, {good_ref.short}) could not be measured: "
                    f"{failed['good'].message}",
                    hint="GOOD must build and run: give a GOOD commit that does (its run is "
                    f"kept: perflab show {result.run_id})",
                    detail=failed["good"].detail,
                )
            outcome = classify(_main_comparisons(result, chosen, "good", name), threshold)
            if outcome is None:
                reason = failed[name].message if name in failed else "nothing was measured"
                return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason=reason)
            return replace(outcome, run_id=result.run_id)

        return measure

    def reporting(measure: Callable[[int, int], StepOutcome]) -> Callable[[int, int], StepOutcome]:
        def wrapped(index: int, attempt: int) -> StepOutcome:
            outcome = measure(index, attempt)
            if on_step is not None:
                commit = line[index]
                on_step(
                    BisectStep(index, commit.commit, commit.subject, outcome, attempt), len(line)
                )
            return outcome

        return wrapped

    chosen = metric
    prior: tuple[BisectStep, ...] = ()
    if chosen is None:
        chosen = Metric.INSTRUCTIONS if instructions_available() else Metric.TIME
        if chosen is Metric.TIME:
            notes.append("valgrind is not installed: bisecting with the time lens")
    outcome = search(line, reporting(measure_with(chosen)))
    if metric is None and chosen is Metric.INSTRUCTIONS and outcome.steps:
        first = outcome.steps[0].outcome
        if first.state is StepState.GOOD:
            notes.append(
                f"instructions did not show the regression (BAD/GOOD {first.ratio:.3f}): "
                "bisecting with the time lens"
            )
            prior = outcome.steps
            chosen = Metric.TIME
            outcome = search(line, reporting(measure_with(chosen)))
        else:
            notes.append(
                "bisecting with the instructions lens: deterministic counts answer each step "
                "without noise (give --metric time to bisect wall time)"
            )
    culprit = line[outcome.culprit] if outcome.culprit is not None else None
    evidence: RunResult | None = None
    if culprit is not None:
        assert outcome.culprit is not None
        parent = line[outcome.culprit - 1].commit if outcome.culprit > 0 else good_ref.commit
        metrics: tuple[Metric, ...] = (chosen,)
        if chosen is not Metric.INSTRUCTIONS and instructions_available():
            metrics = (chosen, Metric.INSTRUCTIONS)
        experiment = benchmark.experiment(
            [Variant(name="parent", git=parent), Variant(name="culprit", git=culprit.commit)],
            metrics=metrics,
        )
        evidence = benchmark.run(experiment, repo)
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


__all__ = ["Benchmarked", "bisect", "ConfigError", "PerflabError"]


# ---- check: a CI gate


SHARED_RUNNER_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "CI")


@dataclass(frozen=True)
class CheckResult:
    base_ref: str  # what the base was given as (or found from the CI's variables)
    base: Commit  # the commit compared against: the merge base of base_ref and head, by default
    head: Commit
    metric: Metric
    threshold: float
    outcome: StepOutcome  # the head against the base: bad = a confirmed regression
    result: RunResult
    notes: tuple[str, ...] = ()

    @property
    def regression(self) -> bool:
        return self.outcome.state is StepState.BAD

    def to_json(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "base": {"commit": self.base.commit, "subject": self.base.subject},
            "head": {"commit": self.head.commit, "subject": self.head.subject},
            "metric": str(self.metric),
            "threshold": self.threshold,
            "state": str(self.outcome.state),
            "regression": self.regression,
            "ratio": self.outcome.ratio,
            "ci_low": self.outcome.ci_low,
            "ci_high": self.outcome.ci_high,
            "run_id": self.result.run_id,
            "notes": list(self.notes),
        }


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


def _fetch_hint(ref: str) -> str:
    remote, _, branch = ref.partition("/")
    fetch = f"git fetch {remote} {branch}" if branch else f"git fetch origin {ref}"
    return (
        f"fetch it first: {fetch} (GitHub Actions: actions/checkout with fetch-depth: 0; "
        "GitLab CI: variables: GIT_DEPTH: 0), or give the base with --base REF"
    )


def check(
    base: str | None = None,
    *,
    benchmark: Benchmarked,
    head: str = "HEAD",
    threshold: float = 0.02,
    metric: Metric | None = None,
    merge_base: bool = True,
    repository: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CheckResult:
    """`head` against the merge base of `base` and `head` (or `base` itself): a regression is
    a ratio whose whole CI is above 1 + threshold. On a CI runner without `metric`, the
    instructions lens (deterministic; shared runners make wall time noise)."""
    environ = os.environ if environ is None else environ
    runner = SubprocessRunner()
    repo = str(repository) if repository else find_repository(runner, os.getcwd())
    base_ref = base or default_base(environ)
    notes: list[str] = []
    try:
        base_commit = resolve_ref(runner, repo, base_ref)
    except GitError:
        raise GitError(
            f"the base ref {base_ref!r} is not in this clone"
            + ("" if base else " (found from the CI's variables)"),
            hint=_fetch_hint(base_ref),
        ) from None
    head_commit = resolve_ref(runner, repo, head)
    compared = base_commit
    if merge_base:
        from perflab.git.repo import run_git

        found = run_git(runner, repo, "merge-base", base_commit.commit, head_commit.commit)
        if not found.ok or not found.stdout.strip():
            raise GitError(
                f"{base_ref} and {head} have no common commit in this clone (a shallow clone "
                "holds only the newest commits)",
                hint="fetch the history: git fetch --unshallow (GitHub Actions: actions/checkout "
                "with fetch-depth: 0; GitLab CI: GIT_DEPTH: 0), or compare with the base itself: "
                "--no-merge-base",
            )
        compared = resolve_ref(runner, repo, found.stdout.strip())
        if compared.commit != base_commit.commit:
            notes.append(
                f"compared with the merge base of {base_ref} and {head} ({compared.short}), "
                f"not {base_ref}'s tip: only this change's own effect is measured"
            )
    chosen = metric
    runner_variable = shared_runner(environ)
    if chosen is None:
        if runner_variable is not None and instructions_available():
            chosen = Metric.INSTRUCTIONS
            notes.append(
                f"the instructions lens ({runner_variable} is set): shared CI runners share "
                "CPUs with other jobs, so wall time there is noise; instruction counts are "
                "deterministic (give --metric time on a dedicated runner)"
            )
        else:
            chosen = Metric.TIME
    if compared.commit == head_commit.commit:
        raise ConfigError(
            f"{head} is the base itself ({compared.short}): there is no change to check",
            hint="run it on a branch with commits after the base, or give --base REF",
        )
    experiment = benchmark.experiment(
        [Variant(name="base", git=compared.commit), Variant(name="head", git=head_commit.commit)],
        metrics=(chosen,),
    )
    result = benchmark.run(experiment, repo)
    outcome = classify(_main_comparisons(result, chosen, "base", "head"), threshold)
    if outcome is None:
        outcome = StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason="not measured")
    return CheckResult(
        base_ref=base_ref,
        base=Commit(compared.commit, compared.subject),
        head=Commit(head_commit.commit, head_commit.subject),
        metric=chosen,
        threshold=threshold,
        outcome=replace(outcome, run_id=result.run_id),
        result=result,
        notes=tuple(notes),
    )
