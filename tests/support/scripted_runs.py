"""A workflow's runs in memory: a `perflab.workflows.benchmarked.Measure` that answers each
experiment of git= variants from a figure per commit, so bisect, check and history are
unit-tested without building or measuring anything.

    runs = ScriptedRuns({good: 100.0, bad: 110.0})
    benchmark = Benchmarked(stmt="f()", store_path=None, runner=git_runner, measure=runs)

Each compared pair gets a comparison per lens and benchmark: the ratio of the two figures with
an interval of +-`spread` around it; a commit scripted as None crashed (the run says so in its
failures, and compares nothing with it); a variant with a patch applied (`check`'s working
tree) is its commit's figure times `patched`. A suite's benchmark can have figures of its own
(`by_benchmark`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Comparison, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo


@dataclass
class ScriptedRuns:
    figures: Mapping[str, float | None]  # commit -> its figure per iteration; None: crashes
    by_benchmark: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    spread: float = 0.005
    patched: float = 1.0
    experiments: list[Experiment] = field(default_factory=list)  # every experiment measured

    def __call__(self, experiment: Experiment, benchmarked: object) -> RunResult:
        self.experiments.append(experiment)
        run_id = len(self.experiments)
        comparisons: list[Comparison] = []
        failures: list[BenchmarkFailedError] = []
        for benchmark in experiment.benchmarks:
            values = {v.name: self._figure(v, benchmark.name) for v in experiment.variants}
            comparisons += [
                self._compared(benchmark.name, metric, baseline, variant, values)
                for metric in experiment.settings.metrics
                for baseline, variant in experiment.comparison_pairs
                if values[baseline] is not None and values[variant] is not None
            ]
            failures += [
                BenchmarkFailedError("crashed", variant=name, benchmark=benchmark.name)
                for name, value in values.items()
                if value is None
            ]
        return RunResult(
            run_id=run_id,
            status=RunStatus.INCOMPLETE if failures else RunStatus.COMPLETE,
            created_at="2026-01-01T00:00:00",
            experiment=experiment,
            machine=MachineInfo.from_json({}),
            comparisons=tuple(comparisons),
            notes=(),
            variant_info={},
            differences=(),
            failures=tuple(failures),
        )

    def _figure(self, variant: Variant, benchmark: str) -> float | None:
        assert variant.git is not None, "a workflow measures git= variants"
        value = self.by_benchmark.get(benchmark, self.figures)[variant.git]
        return None if value is None else value * (self.patched if variant.apply else 1.0)

    def _compared(
        self,
        benchmark: str,
        metric: Metric,
        baseline: str,
        variant: str,
        values: Mapping[str, float | None],
    ) -> Comparison:
        before, after = values[baseline], values[variant]
        assert before is not None and after is not None
        ratio = after / before
        low, high = ratio * (1 - self.spread), ratio * (1 + self.spread)
        verdict = Verdict.SLOWER if low > 1 else Verdict.FASTER if high < 1 else Verdict.EQUIVALENT
        return Comparison(
            benchmark=benchmark,
            metric=metric,
            baseline=baseline,
            variant=variant,
            ratio=ratio,
            ci_low=low,
            ci_high=high,
            verdict=verdict,
            baseline_value=before,
            variant_value=after,
            unit="ns",
        )
