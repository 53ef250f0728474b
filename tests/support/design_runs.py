"""Design runs built from records: a stack of steps and a matrix of changes on bases, with their
comparisons, for the design views' tests and snapshots."""

from __future__ import annotations

import dataclasses

from perflab.analyse.design_analysis import stack_summaries
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Benchmark, Comparison, Experiment, InteractionSpec, Variant
from perflab.records.results import Interaction, InteractionVerdict, RunResult
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import Settings

BENCHMARK = "sorted(data)"
STEPS = ("base", "cache-the-key", "inline-call", "fast-path")


def design_comparison(
    baseline: str, variant: str, ratio: float, verdict: Verdict, *, event: str | None = None
) -> Comparison:
    """`variant` against `baseline` on BENCHMARK: time, or a counter's `event`, ±3%."""
    return Comparison(
        benchmark=BENCHMARK,
        metric=Metric.TIME if event is None else Metric.COUNTERS,
        baseline=baseline,
        variant=variant,
        ratio=ratio,
        ci_low=ratio * 0.97,
        ci_high=ratio * 1.03,
        verdict=verdict,
        baseline_value=20e3,
        variant_value=20e3 * ratio,
        unit="ns",
        event=event,
    )


def _run(experiment: Experiment, comparisons: tuple[Comparison, ...]) -> RunResult:
    return RunResult(
        run_id=3,
        status=RunStatus.COMPLETE,
        created_at="2026-01-01T00:00:00+00:00",
        experiment=experiment,
        machine=MachineInfo(cpu_model="test CPU", cores=2, kernel="6.1.0", pinned_cpu=1),
        comparisons=comparisons,
        notes=(),
        variant_info={},
        differences=(),
    )


def stack_run(*, whole_ratio: float = 0.557) -> RunResult:
    """Three steps of a stack and the whole range, on the time lens."""
    pairs = (*zip(STEPS, STEPS[1:], strict=False), (STEPS[0], STEPS[-1]))
    ratios = (0.82, 0.91, 0.75, whole_ratio)
    comparisons = tuple(
        design_comparison(a, b, r, Verdict.FASTER) for (a, b), r in zip(pairs, ratios, strict=True)
    )
    experiment = Experiment(
        benchmarks=(Benchmark(BENCHMARK, stmt="sorted(data)"),),
        variants=tuple(Variant(n, git=n) for n in STEPS),
        settings=Settings(metrics=(Metric.TIME,)),
        pairs=pairs,
        stack=STEPS,
    )
    result = _run(experiment, comparisons)
    return dataclasses.replace(result, stacks=stack_summaries(experiment, comparisons))


def matrix_run() -> RunResult:
    """Two changes on two bases, one cell not measured; a counter event has its own grid."""
    cells = {
        ("main", "fix-a@main"): (0.8, Verdict.FASTER),
        ("release", "fix-a@release"): (1.0, Verdict.EQUIVALENT),
        ("main", "fix-b@main"): (0.95, Verdict.FASTER),
        ("release", "fix-b@release"): (0.94, Verdict.FASTER),
    }
    found = {pair: design_comparison(*pair, r, v) for pair, (r, v) in cells.items()}
    del found[("release", "fix-b@release")]  # failed to build: not measured
    event = design_comparison("main", "fix-a@main", 0.7, Verdict.FASTER, event="cache-misses")
    interaction = Interaction(
        change="fix-a",
        base="release",
        reference_base="main",
        benchmark=BENCHMARK,
        metric=Metric.TIME,
        ratio=1.25,
        ci_low=1.2,
        ci_high=1.3,
        verdict=InteractionVerdict.WORSE_ON_BASE,
        on_base=found[("release", "fix-a@release")],
        on_reference=found[("main", "fix-a@main")],
        paired=True,
    )
    experiment = Experiment(
        benchmarks=(Benchmark(BENCHMARK, stmt="sorted(data)"),),
        variants=(
            Variant("main", git="main"),
            Variant("release", git="release-2.1"),
            *(Variant(v, git=b) for b, v in cells),
        ),
        settings=Settings(metrics=(Metric.TIME, Metric.COUNTERS)),
        pairs=tuple(cells),
        interactions=(
            InteractionSpec("fix-a", "release", "main", "fix-a@release", "fix-a@main"),
            InteractionSpec("fix-b", "release", "main", "fix-b@release", "fix-b@main"),
        ),
    )
    result = _run(experiment, (*found.values(), event))
    return dataclasses.replace(result, interactions=(interaction,))
