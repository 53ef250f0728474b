"""The trends of a published site: every benchmark's history through each lens, read from the
store's runs (`perflab.publish.figures`).

The store holds runs, not histories: a trend is rebuilt from the runs that measured git= variants
as `perflab history` reads them (`MeasuredCode`: the same benchmark and settings, a commit's
latest figure), its change points found and confirmed as history finds and confirms them (PELT
on the series, then the stored direct comparison of the commits either side). The store has no
git graph: commits are ordered by what its runs say (a run's variants are in the order of their
commits: a history's line oldest first, bisect's GOOD before the step, check's base before its
head), ties in the order the store first measured them."""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from perflab.analyse.places import placed_points
from perflab.analyse.run_levels import levelled_across_runs
from perflab.engine.reusable_runs import MeasuredCode, StoredPair, what_is_measured
from perflab.publish.figures import SiteRuns
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.published import Site, SiteChange, Trend
from perflab.records.workflow_results import HistoryChange, HistoryPoint, HistoryResult, SeriesStep
from perflab.stats.changepoints import change_points
from perflab.store import CodeRun, StoreLocation
from perflab.workflows import confirmed_change

# the front page lists at most this many confirmed change points (the trends' pages, all)
RECENT_CHANGES = 50


@dataclass(frozen=True)
class _Commit:
    commit: str
    subject: str
    tree: str


def read_site(
    store: StoreLocation, *, threshold: float = 0.02, runs: SiteRuns | None = None
) -> Site:
    """Every benchmark x lens the store measured commits of, as a trend with its change
    points; the confirmed ones across all trends, newest first. `runs`: the store's runs as
    read for a site (by default read now, each analysed)."""
    if threshold <= 0:
        raise ConfigError(f"--threshold must be above 0, got {threshold}", hint="e.g. 2%")
    runs = runs or SiteRuns.read(store)
    groups: dict[str, list[CodeRun]] = {}
    for run in runs.runs:
        groups.setdefault(repr(what_is_measured(run.experiment)), []).append(run)
    trends = [
        t for identity, group in groups.items() for t in _trends(identity, group, threshold, runs)
    ]
    trends = _named_apart(trends)
    changes = [SiteChange(t, c) for t in trends for c in t.history.changes]
    confirmed = sorted(
        (s for s in changes if s.change.confirmed),
        key=lambda s: (s.change.run_id or 0, s.change.after.run_id or 0),
        reverse=True,
    )
    return Site(
        trends=tuple(trends),
        recent=tuple(confirmed[:RECENT_CHANGES]),
        unconfirmed=len(changes) - len(confirmed),
        threshold=threshold,
    )


def _trends(
    identity: str, group: list[CodeRun], threshold: float, runs: SiteRuns
) -> Iterator[Trend]:
    """A trend per benchmark and lens of runs that measured the same thing."""
    measured = MeasuredCode(group, group[0].experiment, runs.store, analysed=runs.result)
    line = commit_line(group)
    metrics = dict.fromkeys(m for run in group for m in run.experiment.settings.metrics)
    for benchmark in group[0].experiment.benchmarks:
        for metric in metrics:
            history = _history(measured, line, benchmark.name, metric, threshold, runs)
            if history is not None:
                key = _page_key(identity, benchmark.name, metric)
                ran = {p.run_id for p in history.points if p.run_id is not None}
                machines = sorted({runs.figures(r).place.machine for r in ran})
                yield Trend(benchmark.name, history, key, tuple(machines))


def _history(
    measured: MeasuredCode,
    line: Sequence[_Commit],
    benchmark: str,
    metric: Metric,
    threshold: float,
    runs: SiteRuns,
) -> HistoryResult | None:
    """The benchmark's stored figures by `metric` along `line`, as a history (None: none)."""
    points = []
    for code in line:
        known = measured.value(code.commit, metric, benchmark)
        if known is not None:
            value, unit, run_id = known
            points.append(HistoryPoint(code.commit, code.subject, code.tree, value, unit, run_id))
    if not points:
        return None
    where = {p.run_id: runs.figures(p.run_id).place for p in points if p.run_id is not None}
    placed, placed_note = placed_points(points, where, metric)

    def figure_in_run(point: HistoryPoint, run_id: int) -> float | None:
        return measured.value_in(point.commit, run_id, metric, benchmark)

    levelled = levelled_across_runs(placed, figure_in_run, metric)
    points = list(levelled.points)
    series = [p.series_value or 0.0 for p in points]
    changes = [
        _change(
            measured, benchmark, metric, threshold, SeriesStep.at(points, found.index, found.ratio)
        )
        for found in change_points(series, min_step=threshold)
    ]
    return HistoryResult(
        range_text=f"{points[0].commit[:10]}..{points[-1].commit[:10]}",
        metric=metric,
        threshold=threshold,
        points=tuple(points),
        changes=tuple(changes),
        measured_now=0,
        seconds=0.0,
        notes=tuple(note for note in (placed_note, levelled.note) if note),
        run_scales=levelled.scales,
    )


def _change(
    measured: MeasuredCode, benchmark: str, metric: Metric, threshold: float, step: SeriesStep
) -> HistoryChange:
    """A change point, confirmed (or not) by the latest stored direct comparison of the
    commits either side, as history confirms it; unconfirmed when the store holds none."""
    stored = measured.pair(step.before.commit, step.after.commit, (metric,))
    if stored is None:
        return step.unconfirmed(None)
    # the comparison of this benchmark: a run may have measured several
    own = tuple(c for c in stored.result.comparisons if c.benchmark == benchmark)
    pair = StoredPair(replace(stored.result, comparisons=own), stored.before, stored.after)
    return confirmed_change(pair, step, metric, threshold)


def commit_line(runs: Sequence[CodeRun]) -> list[_Commit]:
    """The commits the runs measured (as committed, no patch), oldest first: each run's
    variants in order are its commits in order; ties (and contradictions) go to the commit the
    store measured first."""
    found: dict[str, _Commit] = {}
    later: dict[str, set[str]] = {}
    for run in runs:
        previous = None
        for variant in run.experiment.variants:
            provenance = run.provenance.get(variant.name)
            if provenance is None or provenance.get("changes"):
                continue
            commit = provenance.get("commit")
            if not isinstance(commit, str) or not commit:
                continue
            subject, tree = provenance.get("subject"), provenance.get("tree")
            found.setdefault(commit, _Commit(commit, str(subject or ""), str(tree or "")))
            later.setdefault(commit, set())
            if previous is not None and previous != commit:
                later[previous].add(commit)
            previous = commit
    return [found[c] for c in _ordered(list(found), later)]


def _ordered(first_seen: list[str], later: dict[str, set[str]]) -> list[str]:
    """A topological order of `later` (a -> the commits after a), ties by `first_seen`; a cycle
    is broken at its commit seen first."""
    rank = {c: i for i, c in enumerate(first_seen)}
    waiting = dict.fromkeys(first_seen, 0)
    for commit in first_seen:
        for after in later[commit]:
            waiting[after] += 1
    ready = [(rank[c], c) for c, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    done: list[str] = []
    left = set(first_seen)
    while left:
        if not ready:  # a cycle: the runs disagree; the first measured goes first
            stuck = min(left, key=rank.__getitem__)
            waiting[stuck] = 0
            ready.append((rank[stuck], stuck))
        _, commit = heapq.heappop(ready)
        if commit not in left:
            continue
        left.discard(commit)
        done.append(commit)
        for after in later[commit]:
            waiting[after] -= 1
            if waiting[after] == 0 and after in left:
                heapq.heappush(ready, (rank[after], after))
    return done


def _page_key(identity: str, benchmark: str, metric: Metric) -> str:
    """A file-name-safe, unique, stable key: the name's letters and a digest of all of it."""
    digest = hashlib.sha256(f"{identity}\0{benchmark}\0{metric}".encode()).hexdigest()[:10]
    readable = re.sub(r"[^a-z0-9]+", "-", benchmark.lower()).strip("-")[:40] or "benchmark"
    return f"{readable}-{metric}-{digest}"


def _named_apart(trends: list[Trend]) -> list[Trend]:
    """Benchmarks of one name measured with different settings are different trends: each
    named with its settings' number."""
    seen: dict[tuple[str, Metric], int] = {}
    named = []
    for trend in trends:
        number = seen[(trend.benchmark, trend.metric)] = (
            seen.get((trend.benchmark, trend.metric), 0) + 1
        )
        named.append(
            trend
            if number == 1
            else replace(trend, benchmark=f"{trend.benchmark} (settings {number})")
        )
    return named
