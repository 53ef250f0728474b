"""The counters lens's cost model for the budget's plan."""

from __future__ import annotations

from perflab.budget.costs import ANALYSIS_S, CostProbe, LensCost, analysis_s
from perflab.budget.perf_costs import PERF_START_S
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.fragments import plural
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings


def counters_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """The counters lens's minimum measurement of one benchmark and what it costs."""
    n = probe.variants
    generations = max(settings.min_generations, 2)
    perf_start_s = PERF_START_S * probe.speed.factor
    after_s = analysis_s(probe, ANALYSIS_S)
    if probe.kind is BenchmarkKind.COMMAND:
        blocks = settings.warmup_blocks + generations
        run_s = probe.sample_s + perf_start_s
        return LensCost(
            COUNTERS,
            minimum_s=blocks * n * run_s,
            needs=f"{blocks} {plural('block', blocks)} of {n} runs under perf stat",
            elastic=True,
            overshoot_s=n * run_s,
            after_s=after_s,
        )
    # lenses/counters: 10 blocks per generation after warm-up, fresh workers under perf stat
    generation_s = n * (probe.startup_s + perf_start_s) + (
        (settings.warmup_blocks + 10) * n * probe.sample_s
    )
    return LensCost(
        COUNTERS,
        minimum_s=generations * generation_s,
        needs=f"{generations} generations of {n} workers under perf stat",
        elastic=True,
        overshoot_s=generation_s,
        after_s=after_s,
    )
