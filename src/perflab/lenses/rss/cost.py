"""The rss lens's cost model for the budget's plan, and the blocks it samples."""

from __future__ import annotations

from perflab.budget.costs import ANALYSIS_S, CostProbe, LensCost, analysis_s
from perflab.lenses.rss.metric import RSS
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings

RSS_BLOCKS = 2  # a warm-up and a measured sample per worker and generation
# the loop under tracemalloc, as slowed for a statement that allocates an object per element
# (the planned upper end); one that allocates less is faster, and the elastic lenses after it
# get what it leaves
RSS_TRACED_SLOWDOWN = 20.0


def rss_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """The rss lens's minimum measurement of one benchmark and what it costs."""
    n = probe.variants
    generations = max(2, settings.min_generations)
    # fresh workers: a forked child's peak RSS would include its server's pages
    start_s = probe.startup_s if probe.kind is BenchmarkKind.STATEMENT else 0.0
    # statements: two blocks, each sample the loop once plain and once under tracemalloc
    # (worker/peak_memory_ops.py); commands: one run per block
    # the traced loops run ~20 samples' length each, long enough to be preempted as often as
    # the reference was on a loaded machine (a probe's one short sample mostly is not): they
    # slow by its factor there; a machine faster than the reference keeps the probe's length
    sampled_s = (
        RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * probe.sample_s * max(1.0, probe.speed.factor)
        if probe.kind is BenchmarkKind.STATEMENT
        else 3 * probe.sample_s
    )
    generation_s = n * (start_s + sampled_s)
    return LensCost(
        RSS,
        minimum_s=generations * generation_s,
        needs=f"{generations} generations of {n} workers",
        after_s=analysis_s(probe, ANALYSIS_S),
    )
