"""What a store already measured, which the workflows that measure commits (`history`,
`bisect`) reuse rather than measure again: the runs it holds of a commit's code with the same
benchmark and settings, read from the store itself. The store is the only record: a store that
lacks a run has it measured, whichever folder or server it lives in.

A stored run counts for a commit when a git= variant of it was that commit (or that tree) with
no changes applied, and it measured the same benchmarks with the same variant fields (python,
env, build ...) and the same settings, save those that only decide how much is measured (the
budget, the number of runs, the seed ...): a larger budget measures the same quantity."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from perflab.analyse.run import analyse_run
from perflab.lenses.registry import declared_options
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Comparison, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.settings import Settings
from perflab.store import CodeRun, location_facts, open_store

# settings that decide how much is measured, not what: runs differing only in these measure
# the same quantity (a bisect step measured again with twice the budget is the same step)
AMOUNT_SETTINGS = frozenset(
    {
        "metrics",
        "budget_s",
        "strict_budget",
        "target_precision",
        "runs",
        "min_runs",
        "max_runs",
        "seed",
        "ray",
        "ray_address",
        "analysis_cache",
        "sample_timeout_s",
        "build_timeout_s",
    }
)


def what_is_measured(experiment: Experiment) -> tuple[object, ...]:
    """What makes two runs' figures the same quantity: the benchmarks, the settings that are
    not amounts, and the variants' fields other than their name and code."""
    settings = experiment.settings
    kept = tuple(
        (f.name, getattr(settings, f.name))
        for f in fields(Settings)
        if f.name not in AMOUNT_SETTINGS and f.name != "lens_options"
    ) + tuple(  # an option an older run's settings lack had its default
        (name, option.value(settings))
        for name, option in declared_options().items()
        if name not in AMOUNT_SETTINGS
    )
    variants = {_without_code(v) for v in experiment.variants}
    return (experiment.benchmarks, kept, tuple(sorted(variants, key=repr)))


def _without_code(variant: Variant) -> str:
    return repr(replace(variant, name="", git=None, apply=()))


@dataclass(frozen=True)
class StoredPair:
    """A stored comparison of two commits' code: the run, and its variants' names."""

    result: RunResult
    before: str
    after: str


class MeasuredCode:
    """The runs of a store that measured git= variants like `planned`'s, by commit and tree;
    each run analysed at most once."""

    def __init__(
        self,
        runs: Sequence[CodeRun],
        planned: Experiment,
        store_path: str | Path,
        *,
        analysed: Callable[[int], RunResult] | None = None,
    ):
        """`analysed`: a run's whole analysis, from a caller that keeps it for other uses (a
        published site's run pages); by default each run is analysed for the lenses asked."""
        self._store_path = store_path
        self._whole = analysed
        identity = self._identity = what_is_measured(planned)
        self._variants: dict[str, list[tuple[int, str]]] = {}  # commit or tree -> (run, variant)
        self._metrics: dict[int, frozenset[Metric]] = {}
        for run in runs:
            if run.status is RunStatus.RUNNING or what_is_measured(run.experiment) != identity:
                continue
            self._metrics[run.run_id] = frozenset(run.experiment.settings.metrics)
            for variant, provenance in run.provenance.items():
                if provenance.get("changes"):
                    continue  # a patch on top: not the commit's code
                for key in (provenance.get("commit"), provenance.get("tree")):
                    if isinstance(key, str) and key:
                        self._variants.setdefault(key, []).append((run.run_id, variant))
        self._analysed: dict[tuple[int, frozenset[Metric]], RunResult] = {}
        self._kept: dict[int, RunResult] = {}  # runs measured since the store was read
        self._indexed: dict[
            tuple[int, Metric], dict[tuple[str | None, str], tuple[float, str]]
        ] = {}

    @classmethod
    def read(cls, store_path: str | Path | None, planned: Experiment) -> MeasuredCode:
        """The store's runs like `planned`'s; none for an in-memory store (None) or an SQLite
        file not made yet."""
        if store_path is None:
            return cls((), planned, "")
        location = location_facts(store_path)
        if not location.exists:
            return cls((), planned, store_path)
        store = open_store(store_path, create=location.create_to_read)
        try:
            return cls(store.runs_of_code(), planned, store_path)
        finally:
            store.close()

    def value(
        self, code: str, metric: Metric, benchmark: str | None = None
    ) -> tuple[float, str, int] | None:
        """The latest stored figure of `code` (a commit or a tree) by `metric`: per iteration,
        its unit and the run; None when the store holds none. `benchmark`: that benchmark's
        figure (None: the first benchmark's, as a workflow of one benchmark reads it)."""
        for run_id, variant in self._latest_first(code):
            if metric not in self._metrics[run_id]:
                continue
            found = self._values(run_id, metric).get((benchmark, variant))
            if found is not None:
                return (*found, run_id)
        return None

    def value_in(
        self, code: str, run_id: int, metric: Metric, benchmark: str | None = None
    ) -> float | None:
        """The figure of `code` (a commit or a tree) by `metric` in run `run_id`, as `value`
        reads it; None when that run did not measure it so."""
        for found_run, variant in self._variants.get(code, ()):
            if found_run == run_id and metric in self._metrics[run_id]:
                found = self._values(run_id, metric).get((benchmark, variant))
                if found is not None:
                    return found[0]
        return None

    def _values(
        self, run_id: int, metric: Metric
    ) -> dict[tuple[str | None, str], tuple[float, str]]:
        """(benchmark or None: any, variant) -> the figure of the run's first comparison by
        `metric` that has the variant on either side: an index, so that reading a whole
        published site's figures is not a scan of a run's comparisons per figure."""
        key = (run_id, metric)
        if key not in self._indexed:
            index: dict[tuple[str | None, str], tuple[float, str]] = {}
            for c in self._comparisons(run_id, (metric,)):
                if c.metric is metric and c.event is None:
                    for name, value in (
                        (c.baseline, c.baseline_value),
                        (c.variant, c.variant_value),
                    ):
                        index.setdefault((c.benchmark, name), (value, c.unit))
                        index.setdefault((None, name), (value, c.unit))
            self._indexed[key] = index
        return self._indexed[key]

    def keep(self, result: RunResult) -> None:
        """A run just measured into this store, found by `pair` and `most_of` from now on
        without reading the store again, so a workflow's later steps reuse what its earlier
        ones measured. Nothing is kept without a store (a run in memory is no stored run to
        name), nor a run that measured otherwise than `planned`."""
        if not self._store_path or what_is_measured(result.experiment) != self._identity:
            return
        self._metrics[result.run_id] = frozenset(result.experiment.settings.metrics)
        self._kept[result.run_id] = result
        for variant in result.experiment.variants:
            if variant.git is None or variant.apply:
                continue  # not a commit's code as committed
            info = result.variant_info.get(variant.name)
            provenance = (None if info is None else info.provenance) or {}
            for key in {variant.git, provenance.get("commit"), provenance.get("tree")}:
                if isinstance(key, str) and key:
                    self._variants.setdefault(key, []).append((result.run_id, variant.name))

    def pair(self, before: str, after: str, metrics: Sequence[Metric]) -> StoredPair | None:
        """The latest stored run that compared `after` with `before` (commits or trees) with
        every lens of `metrics`, the first decided; None when the store holds none."""
        befores = dict(self._variants.get(before, ()))
        for run_id, variant in self._latest_first(after):
            if run_id not in befores or not set(metrics) <= self._metrics[run_id]:
                continue
            wanted = (befores[run_id], variant)
            for c in self._comparisons(run_id, metrics):
                if c.metric is metrics[0] and c.event is None and (c.baseline, c.variant) == wanted:
                    return StoredPair(self._run(run_id, metrics), *wanted)
        return None

    def most_of(self, before: str, after: str, metrics: Sequence[Metric]) -> StoredPair | None:
        """The stored run that compared `after` with `before` (commits or trees) with the first
        lens of `metrics` and the most of the others (the latest of those), analysed for the
        lenses of `metrics` it holds; None when no run compared them with the first."""
        befores = dict(self._variants.get(before, ()))
        held = [
            (len(self._metrics[run_id] & set(metrics)), run_id, variant)
            for run_id, variant in self._latest_first(after)
            if run_id in befores and metrics[0] in self._metrics[run_id]
        ]
        for _, run_id, variant in sorted(held, reverse=True):
            lenses = [m for m in metrics if m in self._metrics[run_id]]
            wanted = (befores[run_id], variant)
            for c in self._comparisons(run_id, lenses):
                if c.metric is metrics[0] and c.event is None and (c.baseline, c.variant) == wanted:
                    return StoredPair(self._run(run_id, lenses), *wanted)
        return None

    def _latest_first(self, code: str) -> Iterator[tuple[int, str]]:
        yield from sorted(self._variants.get(code, ()), reverse=True)

    def _comparisons(self, run_id: int, metrics: Sequence[Metric]) -> Sequence[Comparison]:
        return self._run(run_id, metrics).comparisons

    def _run(self, run_id: int, metrics: Sequence[Metric]) -> RunResult:
        if run_id in self._kept:
            return self._kept[run_id]
        if self._whole is not None:
            return self._whole(run_id)
        key = (run_id, frozenset(metrics))
        if key not in self._analysed:
            store = open_store(self._store_path, create=False)
            try:
                self._analysed[key] = analyse_run(store.load_run(run_id, metrics=metrics))
            finally:
                store.close()
        return self._analysed[key]
