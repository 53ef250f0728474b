"""`bisect`: find the commit. A binary search over the first-parent line from GOOD to BAD for
the first commit where a benchmark got worse than GOOD by more than a threshold, going inside
merges, with the culprit against its parent as evidence."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from perflab.analyse.same_work import gate_disagreement
from perflab.bisection.search import search
from perflab.bisection.threshold import classify
from perflab.engine.reusable_runs import MeasuredCode
from perflab.git.repo import (
    GitError,
    ResolvedRef,
    first_parent_line,
    merged_branch,
    resolve_ref,
)
from perflab.records.bisect import (
    BisectResult,
    BisectStep,
    Commit,
    Direction,
    EvidenceRun,
    EvidenceSource,
    SearchOutcome,
    StepOutcome,
    StepState,
)
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.model import Experiment, Variant
from perflab.records.results import RunResult
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
    are read, not measured again, and so are the runs of this bisection's earlier steps
    (`benchmark.store_path` None keeps no store: nothing is reused). The culprit against its
    parent is measured with every lens given, and time and instructions, save the lenses a
    stored run of the two holds already (a step that compared them). Without `metric`, the
    instructions lens (deterministic) is tried first and the time lens used when
    instructions do not show the change. A suite (`benchmark.suite`) must select one
    benchmark: the search follows it. The repository is `repository`, else the one around
    the current directory; `on_step` hears each step as it is answered."""
    services = WorkflowServices(repository=repository, on_step=on_step, clock=clock)
    return bisect_with(
        good,
        bad,
        benchmark=benchmark,
        services=services,
        threshold=threshold,
        metric=metric,
        direction=direction,
    )


def bisect_with(
    good: str,
    bad: str,
    *,
    benchmark: Benchmarked,
    services: WorkflowServices,
    threshold: float = 0.02,
    metric: Lenses = None,
    direction: Direction | str = Direction.SLOWER,
) -> BisectResult:
    """`bisect`, its repository, step listener and clock given as one record (the CLI's way
    in)."""
    started = services.clock()
    lenses = given_lenses(metric, benchmark)
    plan = _Plan.of(good, bad, benchmark, services)
    steps = _BisectSteps(
        benchmark=benchmark,
        repo=plan.repo,
        line=plan.line,
        good=plan.good,
        threshold=threshold,
        direction=Direction(direction),
        on_step=services.on_step,
        measured=plan.measured,
    )
    found = _search(steps, lenses[0] if lenses else None)
    evidence = _culprit_evidence(steps, found, evidence_lenses(found.metric, lenses))
    return _answer(plan, steps, found, evidence, seconds=services.clock() - started)


@dataclass(frozen=True)
class _Plan:
    """What the search goes over, before any step: GOOD and BAD resolved in the repository,
    BAD's first-parent line after GOOD, the benchmark of a suite it follows, and the runs the
    store holds already."""

    good: ResolvedRef
    bad: ResolvedRef
    repo: str
    line: tuple[Commit, ...]
    followed: str | None  # the suite's one benchmark; None: not a suite
    measured: MeasuredCode

    @classmethod
    def of(cls, good: str, bad: str, benchmark: Benchmarked, services: WorkflowServices) -> _Plan:
        planned = planned_experiment(benchmark)
        followed = _followed(benchmark, planned, f"{good}..{bad}")
        runner = benchmark.runner
        repo = services.repository_path(runner)
        good_ref = resolve_ref(runner, repo, good)
        bad_ref = resolve_ref(runner, repo, bad)
        line = tuple(Commit(c, s) for c, s in first_parent_line(runner, repo, good_ref, bad_ref))
        measured = MeasuredCode.read(benchmark.store_path, planned)
        return cls(good_ref, bad_ref, repo, line, followed, measured)


def _answer(
    plan: _Plan, steps: _BisectSteps, found: _Found, evidence: _Evidence, *, seconds: float
) -> BisectResult:
    """The bisection's answer: where the search got to, and the culprit's evidence."""
    return BisectResult(
        good=Commit(plan.good.commit, plan.good.subject),
        bad=Commit(plan.bad.commit, plan.bad.subject),
        metric=found.metric,
        threshold=steps.threshold,
        line=plan.line,
        steps=found.steps,
        culprit=found.culprit,
        candidates=found.candidates,
        stopped=found.stopped,
        seconds=seconds,
        evidence_run=evidence.runs[0].run_id if evidence.runs else None,
        notes=found.notes,
        evidence=evidence.results[0] if evidence.results else None,
        disagreement=evidence.disagreement(found.metric, steps.threshold),
        direction=steps.direction,
        merges=found.merges,
        not_inside=found.not_inside,
        parent=found.parent,
        benchmark=plan.followed,
        evidence_runs=evidence.runs,
        more_evidence=evidence.results[1:],
    )


# the benchmarks a refusal names, and the filters it shows, before "and N more"
NAMED_BENCHMARKS = 5
SHOWN_FILTERS = 3


def _followed(benchmark: Benchmarked, planned: Experiment, range_text: str) -> str | None:
    """The one benchmark of the suite the search follows (None: not a suite). A step's
    answer is one benchmark's, so a suite that selects several is refused with the filter
    that selects each."""
    suite = benchmark.suite
    if suite is None:
        return None
    names = [b.name for b in planned.benchmarks]
    if len(names) == 1:
        return names[0]
    suite_flags = " ".join(shlex.quote(w) for w in suite.flags())
    more = f" and {len(names) - NAMED_BENCHMARKS} more" if len(names) > NAMED_BENCHMARKS else ""
    filters = []
    for name in names[:SHOWN_FILTERS]:
        narrowed = suite.selecting(name, names)
        if narrowed is not None:
            words = " ".join(shlex.quote(w) for w in narrowed.filter_flags())
            filters.append(f"{words} ({name})")
    how = " or ".join(filters) if filters else "a filter of the suite that selects one of them"
    raise ConfigError(
        f"bisect follows one benchmark, and {suite_flags} selects {len(names)}: "
        f"{', '.join(names[:NAMED_BENCHMARKS])}{more}",
        hint=f"select the one to follow: {how}; perflab history {range_text} {suite_flags} says "
        "which benchmarks changed where",
    )


@dataclass(frozen=True)
class _Found:
    """Where the search has got to: the lens that decided, its steps, the commit found so far
    and its first parent, the merges gone inside and why it could not go further in; where it
    found none on BAD's line, the commits left and why it stopped."""

    metric: Metric
    steps: tuple[BisectStep, ...]
    culprit: Commit | None = None
    parent: Commit | None = None
    merges: tuple[Commit, ...] = ()
    not_inside: str = ""
    candidates: tuple[Commit, ...] = ()
    stopped: str = ""
    notes: tuple[str, ...] = ()


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
        comparisons = main_comparisons(stored.result, metric, stored.before, stored.after)
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
        self.measured.keep(result)
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
            main_comparisons(result, metric, "good", name), self.threshold, self.direction
        )
        if outcome is None:
            reason = failed[name].message if name in failed else "nothing was measured"
            return StepOutcome(StepState.SKIPPED, run_id=result.run_id, reason=reason)
        return replace(outcome, run_id=result.run_id)


def _search(steps: _BisectSteps, metric: Metric | None) -> _Found:
    """The search along BAD's first-parent line with a lens (`metric`, else the one that shows
    the change), then inside each merge it finds."""
    chosen, prior, outcome, notes = _search_with_a_lens(steps, metric)
    found = _Found(
        chosen,
        prior + outcome.steps,
        candidates=tuple(steps.line[i] for i in outcome.candidates),
        stopped=outcome.stopped,
        notes=tuple(notes),
    )
    return found if outcome.culprit is None else _inside_merges(steps, outcome.culprit, found)


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


def _inside_merges(steps: _BisectSteps, culprit: int, found: _Found) -> _Found:
    """The culprit on BAD's first-parent line; where it is a merge, the search goes on along
    the branch it merged (the merged branch's commits compared with GOOD, as every step is),
    again while the commit found is a merge."""
    runner, line, index, metric = steps.benchmark.runner, steps.line, culprit, found.metric
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
    words += b.suite.flags() if b.suite is not None else ()
    words += ["--metric", str(metric), "--threshold", f"{steps.threshold:.4g}"]
    if steps.direction is not Direction.SLOWER:
        words.append(f"--{steps.direction}")
    return " ".join(shlex.quote(w) for w in words) + " (with your other options)"


@dataclass(frozen=True)
class _Evidence:
    """The culprit against its parent: the runs read (the one with the deciding lens first),
    what each is, and the names of the two variants in them."""

    results: tuple[RunResult, ...] = ()
    runs: tuple[EvidenceRun, ...] = ()
    names: tuple[str, str] = ("parent", "culprit")

    def disagreement(self, gate: Metric, threshold: float) -> LensDisagreement | None:
        comparisons = [c for r in self.results for c in r.comparisons]
        return gate_disagreement(comparisons, gate, self.names, threshold) if comparisons else None


def _culprit_evidence(steps: _BisectSteps, found: _Found, metrics: tuple[Metric, ...]) -> _Evidence:
    """The culprit found against its parent, with `metrics` (the deciding lens first): the
    stored runs of the two (a step of this search, or earlier runs) for the lenses they hold,
    and a new run for the lenses none holds only, its variants named as the stored runs' so
    that all their comparisons read as one pair. None found: no evidence."""
    parent, culprit = found.parent, found.culprit
    if parent is None or culprit is None:
        return _Evidence()
    searched = {s.outcome.run_id for s in found.steps if not s.outcome.reused}
    results: list[RunResult] = []
    runs: list[EvidenceRun] = []
    names: tuple[str, str] | None = None
    missing = metrics
    while missing:
        stored = steps.measured.most_of(parent.commit, culprit.commit, missing)
        if stored is None or names not in (None, (stored.before, stored.after)):
            break  # a run naming the two otherwise would not read as the same pair
        names = (stored.before, stored.after)
        held = set(stored.result.experiment.settings.metrics)
        run_id = stored.result.run_id
        source = EvidenceSource.SEARCH if run_id in searched else EvidenceSource.STORE
        runs.append(EvidenceRun(run_id, tuple(m for m in missing if m in held), source))
        results.append(stored.result)
        missing = tuple(m for m in missing if m not in held)
    names = names or ("parent", "culprit")
    if missing:
        result = _measured(steps, parent, culprit, missing, names)
        results.append(result)
        runs.append(EvidenceRun(result.run_id, missing))
    return _Evidence(tuple(results), tuple(runs), names)


def _measured(
    steps: _BisectSteps,
    parent: Commit,
    culprit: Commit,
    metrics: tuple[Metric, ...],
    names: tuple[str, str],
) -> RunResult:
    experiment = steps.benchmark.experiment(
        [Variant(name=names[0], git=parent.commit), Variant(name=names[1], git=culprit.commit)],
        metrics=metrics,
    )
    return steps.benchmark.run(experiment, steps.repo)
