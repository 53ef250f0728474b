"""`check`: a CI gate. The working tree or HEAD against its merge base with the base branch,
one run; the answer a CI job reads (exit status, one line, the benchmarks that regressed)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from perflab.analyse.same_work import gate_disagreement
from perflab.bisection.threshold import classify
from perflab.engine.prepare.git_prepare import WORKING_TREE_PATCH
from perflab.git.repo import (
    GitError,
    ResolvedRef,
    dirty_summary,
    resolve_ref,
    run_git,
    working_tree_patch,
)
from perflab.machine.proc import ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.records.bisect import (
    Commit,
    StepOutcome,
    StepState,
)
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.model import Variant
from perflab.records.results import RunResult
from perflab.records.workflow_results import (
    BASE_VARIABLES,
    CheckResult,
    base_words,
)
from perflab.workflows.benchmarked import (
    Benchmarked,
    Lenses,
    given_lenses,
    instructions_available,
    main_comparisons,
)
from perflab.workflows.services import WorkflowServices

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
    variables = os.environ if environ is None else environ  # {}: no CI's variables
    services = WorkflowServices(repository=repository, environ=variables)
    return check_with(
        base,
        benchmark=benchmark,
        services=services,
        head=head,
        threshold=threshold,
        metric=metric,
        merge_base=merge_base,
    )


def check_with(
    base: str | None = None,
    *,
    benchmark: Benchmarked,
    services: WorkflowServices,
    head: str | None = None,
    threshold: float = 0.02,
    metric: Lenses = None,
    merge_base: bool = True,
) -> CheckResult:
    """`check`, its repository and the CI's variables given as one record (the CLI's way
    in)."""
    lenses_given = given_lenses(metric, benchmark)
    runner = benchmark.runner
    repo = services.repository_path(runner)
    base_ref, base_from = (base, "--base") if base else default_base(services.environ)
    change = _change(runner, repo, base_ref, base_from, head, merge_base=merge_base)
    notes = change.notes()
    lenses = lenses_given or _check_lenses(services.environ, benchmark, notes)
    result = _measure_change(benchmark, change, lenses, notes)
    chosen = lenses[0]
    outcome = _check_outcome(result, chosen, threshold)
    disagreement = gate_disagreement(result.comparisons, chosen, ("base", "head"), threshold)
    return CheckResult(
        base_ref=base_ref,
        base=Commit(change.compared.commit, change.compared.subject),
        head=Commit(change.head.commit, change.head.subject),
        working_tree=bool(change.uncommitted),
        metric=chosen,
        threshold=threshold,
        outcome=outcome,
        result=result,
        notes=tuple(notes),
        lenses=lenses,
        disagreement=disagreement,
        overruled=not lenses_given and _time_overrules(outcome, disagreement),
        base_from=base_from,
        regressed=regressed_benchmarks(result, chosen, threshold),
    )


@dataclass(frozen=True, kw_only=True)
class _Change:
    """What a check measures: `head` (with the working tree's `uncommitted` patch applied)
    against `compared`, the merge base of `base` and `head` or `base` itself."""

    repo: str
    base_ref: str
    base: ResolvedRef
    head_ref: str
    head: ResolvedRef
    compared: ResolvedRef
    uncommitted: str  # "" when head is a commit as committed

    def notes(self) -> list[str]:
        """What a reader of the answer needs to know about the commits compared."""
        if self.compared.commit == self.base.commit:
            return []
        return [
            f"compared with the merge base of {self.base_ref} and {self.head_ref} "
            f"({self.compared.short}), not {self.base_ref}'s tip: only this change's own effect "
            "is measured"
        ]


def _change(
    runner: ProcessRunner,
    repo: str,
    base_ref: str,
    base_from: str,
    head: str | None,
    *,
    merge_base: bool,
) -> _Change:
    """The commits a check compares, resolved; without `head`, the working tree."""
    head_ref = head or "HEAD"
    base_commit = _resolve_base(runner, repo, base_ref, base_from)
    head_commit = resolve_ref(runner, repo, head_ref)
    compared = base_commit
    if merge_base:
        compared = _merge_base(runner, repo, base_ref, base_commit, head_ref, head_commit)
    uncommitted = _uncommitted(runner, repo) if head is None else ""
    if compared.commit == head_commit.commit and not uncommitted:
        raise _no_change(head_ref, compared)
    return _Change(
        repo=repo,
        base_ref=base_ref,
        base=base_commit,
        head_ref=head_ref,
        head=head_commit,
        compared=compared,
        uncommitted=uncommitted,
    )


def regressed_benchmarks(result: RunResult, metric: Metric, threshold: float) -> tuple[str, ...]:
    """The benchmarks whose head is worse than the base beyond `threshold` over its whole
    interval, worst first: the suite's comparisons are decided together (the run's family),
    so each one named is a claim at the family's confidence."""
    limit = 1.0 + threshold
    worse = [
        c
        for c in main_comparisons(result, metric, "base", "head")
        if c.verdict is not Verdict.INVALID and c.ci_low > limit
    ]
    return tuple(c.benchmark for c in sorted(worse, key=lambda c: -c.ratio))


def _uncommitted(runner: ProcessRunner, repo: str) -> str:
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
    outcome = classify(main_comparisons(result, metric, "base", "head"), threshold)
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


def _resolve_base(runner: ProcessRunner, repo: str, base_ref: str, base_from: str) -> ResolvedRef:
    try:
        return resolve_ref(runner, repo, base_ref)
    except GitError:
        raise GitError(
            f"the base ref {base_ref!r} is not in this clone ({base_words(base_from)})",
            hint=_fetch_hint(base_ref, run_git(runner, repo, "remote").stdout.split()),
        ) from None


def _merge_base(
    runner: ProcessRunner,
    repo: str,
    base_ref: str,
    base: ResolvedRef,
    head_ref: str,
    head: ResolvedRef,
) -> ResolvedRef:
    """The merge base of BASE and HEAD."""
    found = run_git(runner, repo, "merge-base", base.commit, head.commit)
    if not found.ok or not found.stdout.strip():
        raise GitError(
            f"{base_ref} and {head_ref} have no common commit in this clone (a shallow clone "
            "holds only the newest commits)",
            hint="fetch the history: git fetch --unshallow (GitHub Actions: actions/checkout "
            "with fetch-depth: 0; GitLab CI: GIT_DEPTH: 0), or compare with the base itself: "
            "--no-merge-base",
        )
    return resolve_ref(runner, repo, found.stdout.strip())


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
    benchmark: Benchmarked, change: _Change, metrics: tuple[Metric, ...], notes: list[str]
) -> RunResult:
    """The change's base against its head, with the working tree's uncommitted patch applied
    to the head."""
    with private_folder("check") as folder:
        apply: tuple[str, ...] = ()
        if change.uncommitted:
            patch = Path(folder) / WORKING_TREE_PATCH
            patch.write_text(change.uncommitted)
            apply = (str(patch),)
            notes.append(
                f"head is the working tree: HEAD ({change.head.short}) with its uncommitted "
                "changes to tracked files applied (git diff HEAD; an untracked file after git "
                "add -N FILE), the base as committed; --head HEAD measures HEAD as committed"
            )
        variants = [
            Variant(name="base", git=change.compared.commit),
            Variant(name="head", git=change.head.commit, apply=apply),
        ]
        return benchmark.run(benchmark.experiment(variants, metrics=metrics), change.repo)
