"""A long history is measured in runs of a bounded size, one after another, and no run is kept
once its points are filled in: perflab's memory does not grow with the history's length."""

from __future__ import annotations

import gc
import importlib
import weakref
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Benchmark, Comparison, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo
from perflab.workflows import Benchmarked, history, suite_history
from tests.support.git_repo import commit, git

pytestmark = pytest.mark.integration

# the module, not the function `perflab.workflows.history` the package exports under its name
series = importlib.import_module("perflab.workflows.history")


def test_the_wanted_trees_are_split_in_order() -> None:
    wanted = {f"t{i}": [i] for i in range(7)}
    parts = list(series.runs_of(wanted, size=3))
    assert [list(p) for p in parts] == [["t0", "t1", "t2"], ["t3", "t4", "t5"], ["t6"]]
    assert parts[2] == {"t6": [6]}
    assert list(series.runs_of({}, size=3)) == []


@dataclass(frozen=True)
class _CountingBenchmark(Benchmarked):
    """Answers each run at once, 100 instructions a variant, and checks that no run it
    answered before is still alive when the next is asked for."""

    seen: list[int] | None = None  # the number of variants of each run
    alive: list[weakref.ref[RunResult]] | None = None

    def run(self, experiment: Experiment, repository: str) -> RunResult:
        assert self.seen is not None and self.alive is not None
        gc.collect()
        assert [r for r in self.alive if r() is not None] == []
        names = [v.name for v in experiment.variants]
        self.seen.append(len(names))
        comparisons = tuple(
            Comparison(
                benchmark="./prog",
                metric=Metric.INSTRUCTIONS,
                baseline=names[0],
                variant=name,
                ratio=1.0,
                ci_low=1.0,
                ci_high=1.0,
                verdict=Verdict.EQUIVALENT,
                baseline_value=100.0,
                variant_value=100.0,
                unit="instructions",
            )  # fmt: skip
            for name in names[1:]
        )
        result = RunResult(
            run_id=len(self.seen),
            status=RunStatus.COMPLETE,
            created_at="",
            experiment=experiment,
            machine=MachineInfo.from_json({}),
            comparisons=comparisons,
            notes=(),
            variant_info={},
            differences=(),
        )
        self.alive.append(weakref.ref(result))
        return result


def test_a_long_history_is_measured_in_bounded_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for number in range(8):
        commit(repo, f"commit {number}", {"work.h": f"/* {number} */\n"})
    monkeypatch.setattr(series, "COMMITS_PER_RUN", 3)
    bench = _CountingBenchmark(cmd="./prog", store_path=None, seen=[], alive=[])
    found = history("HEAD~7..main", benchmark=bench, metric="instructions", repository=repo)
    # 8 commits (the base included): 3 + 3 + 2, in that order, each run after the first with
    # the last commit of the run before measured again (its level against that run's)
    assert bench.seen == [3, 1 + 3, 1 + 2]
    assert [p.value for p in found.points] == [100.0] * 8
    assert [p.run_id for p in found.points] == [1, 1, 1, 2, 2, 2, 3, 3]
    assert found.measured_now == 8 and not found.changes


@dataclass(frozen=True)
class _CountingSuite(_CountingBenchmark):
    """A suite of two benchmarks, `one` (100 instructions a variant) and `two` (200)."""

    def experiment(
        self, variants: list[Variant], *, metrics: tuple[Metric, ...], budget_scale: float = 1.0
    ) -> Experiment:
        made = super().experiment(variants, metrics=metrics, budget_scale=budget_scale)
        return replace(
            made, benchmarks=(Benchmark("one", cmd="./one"), Benchmark("two", cmd="./two"))
        )

    def run(self, experiment: Experiment, repository: str) -> RunResult:
        answered = super().run(experiment, repository)
        comparisons = tuple(
            replace(c, benchmark=name, baseline_value=value, variant_value=value)
            for name, value in (("one", 100.0), ("two", 200.0))
            for c in answered.comparisons
        )
        return replace(answered, comparisons=comparisons)


def test_a_suites_long_history_is_measured_in_bounded_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for number in range(5):
        commit(repo, f"commit {number}", {"work.h": f"/* {number} */\n"})
    monkeypatch.setattr(series, "COMMITS_PER_RUN", 2)
    suite = _CountingSuite(cmd="./one", store_path=None, seen=[], alive=[])
    found = suite_history("HEAD~4..main", benchmark=suite, metric="instructions", repository=repo)
    assert suite.seen == [2, 1 + 2, 1 + 1]  # 5 commits: 2 + 2 + 1, each with the shared one
    assert found.measured_now == 5
    assert [s.benchmark for s in found.series] == ["one", "two"]
    for measured, value in zip(found.series, (100.0, 200.0), strict=True):
        # each benchmark's series filled from the same three runs, each point from its own
        assert [p.value for p in measured.points] == [value] * 5
        assert [p.run_id for p in measured.points] == [1, 1, 2, 2, 3]
        assert not measured.changes
