"""The profile lens's cost model for the budget's plan, and how many processes it profiles."""

from __future__ import annotations

from perflab.plan.budget import PERF_START_S, CostProbe, LensCost, analysis_s, side_by_side_s
from perflab.records.model import BenchmarkKind, Metric, Settings

# A statement is profiled in this many independent worker processes per variant, each recording
# its share of the region: a function claimed to have appeared (disappeared) must be there in
# every one (perf_script.even_across_parts), not in one process's one-off work. 2: the fewest
# that can tell, at one more perf and interpreter start-up per variant.
PROFILE_PROCESSES = 2
PROFILE_REGION_S = 1.0  # what the lens records per variant
PROFILE_POST_S = 1.5  # perf script and symbolisation, per variant
PROFILE_ANALYSIS_S = 0.05  # after measuring: flame trees and per-symbol shares


def profile_cost(
    probe: CostProbe, settings: Settings, *, processes: int = PROFILE_PROCESSES
) -> LensCost:
    """`processes`: workers per variant of a statement."""
    n = probe.variants
    factor = probe.speed.factor
    statement = probe.kind is BenchmarkKind.STATEMENT
    processes = processes if statement else 1
    start_s = probe.startup_s + PERF_START_S * factor if statement else 0.0
    record_s = max(PROFILE_REGION_S, processes * probe.sample_s)
    # statements: each generation's variants are read back (perf script) side by side, on
    # the CPUs other perflab runs leave (lenses/profile: all_cpus, run_threads)
    script_s = (
        processes * side_by_side_s(PROFILE_POST_S, n, probe.counting_cpus, factor)
        if statement
        else n * PROFILE_POST_S * factor
    )
    return LensCost(
        Metric.PROFILE,
        minimum_s=n * processes * start_s + script_s + n * record_s,
        needs=f"{PROFILE_REGION_S:g} s recorded per variant, then symbolised",
        after_s=analysis_s(probe, PROFILE_ANALYSIS_S),
    )
