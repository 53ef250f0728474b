"""The rss lens's cost model for the budget's plan, and the blocks it samples."""

from __future__ import annotations

from perflab.plan.budget import (
    ANALYSIS_S,
    REFERENCE_S,
    CostProbe,
    LensCost,
    MachineSpeed,
    analysis_s,
)
from perflab.records.model import BenchmarkKind, Metric, Settings

RSS_BLOCKS = 2  # a warm-up and a measured sample per worker and generation
# the loop under tracemalloc: sum(range(1000)) (an int allocated per element) runs ~20x slower;
# a statement that allocates less is faster, and the elastic lenses after it get what it leaves
RSS_TRACED_SLOWDOWN = 20.0
# The probe's reference program's CPU time on the reference machine, quiet (its wall time
# there is plan.budget.REFERENCE_S): the rest of its wall time is process start-up.
REFERENCE_CPU_S = 0.09


def load_slowdown(speed: MachineSpeed) -> float:
    """How much longer than on an idle CPU a loop of a fraction of a second runs here now, for
    the other processes' load: the reference run's wall over CPU time, against the same on the
    quiet reference machine; at least 1. A slower CPU is not counted: the probe's sample was
    measured on this one. Without the reference's CPU time, the machine's factor."""
    if speed.reference_s is None or not speed.reference_cpu_s or speed.reference_cpu_s <= 0:
        return max(1.0, speed.factor)
    quiet = REFERENCE_S / REFERENCE_CPU_S
    return max(1.0, speed.reference_s / speed.reference_cpu_s / quiet)


def rss_cost(probe: CostProbe, settings: Settings) -> LensCost:
    n = probe.variants
    generations = max(2, settings.min_generations)
    # fresh workers: a forked child's peak RSS would include its server's pages
    start_s = probe.startup_s if probe.kind is BenchmarkKind.STATEMENT else 0.0
    # statements: two blocks, each sample the loop once plain and once under tracemalloc
    # (lenses/rss/worker_ops.py); commands: one run per block
    # the traced loops run ~20 samples' length each, long enough to be preempted as often as
    # a loop of that length is on a loaded machine (a probe's one short sample mostly is not):
    # they slow by the load's share of the CPU; the probe's sample already ran at this CPU's
    # speed, so a slower machine is not counted twice
    sampled_s = (
        RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * probe.sample_s * load_slowdown(probe.speed)
        if probe.kind is BenchmarkKind.STATEMENT
        else 3 * probe.sample_s
    )
    generation_s = n * (start_s + sampled_s)
    return LensCost(
        Metric("rss"),
        minimum_s=generations * generation_s,
        needs=f"{generations} generations of {n} workers",
        after_s=analysis_s(probe, ANALYSIS_S),
    )
