"""The profile lens's cost model for the budget's plan, and how many processes it profiles."""

from __future__ import annotations

from perflab.budget.costs import CostProbe, LensCost, analysis_s, side_by_side_s
from perflab.budget.perf_costs import (
    CALL_GRAPH_PROCESSES,
    CALL_GRAPH_RECORDING,
    CALL_GRAPH_REGION_S,
    PERF_START_S,
)
from perflab.lenses.profile.metric import PROFILE
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings

# perf script and symbolisation of one statement process's recording (its share of the region)
PROFILE_POST_S = 0.8
PROFILE_COMMAND_POST_S = 1.5  # ... of a command's runs, per variant
# a statement's sampling switched on and off around each of its samples: a round trip through
# perf record's control FIFO each way, a latency the machine's speed factor does not scale
PROFILE_TOGGLE_S = 0.003
# the asm lens's reading of the same recording (sampled instructions only, no unwinding): made
# with the recording when the run has a lens sharing it
LEAVES_POST_S = 0.1
PROFILE_ANALYSIS_S = 0.05  # after measuring: flame trees and per-symbol shares


def profile_cost(
    probe: CostProbe, settings: Settings, *, processes: int = CALL_GRAPH_PROCESSES
) -> LensCost:
    """`processes`: workers per variant of a statement. All of it is the recording other lenses
    of the run may read too (statements, `CostProbe.shared_recordings`): whichever of them runs
    first pays it (`budget.charge_once`)."""
    n = probe.variants
    factor = probe.speed.factor
    statement = probe.kind is BenchmarkKind.STATEMENT
    processes = processes if statement else 1
    start_s = probe.startup_s + PERF_START_S * factor if statement else 0.0
    record_s = max(CALL_GRAPH_REGION_S, processes * probe.sample_s)
    # statements: the other readers' readings (the asm lens's) are made with the recording
    shared = statement and CALL_GRAPH_RECORDING in probe.shared_recordings
    post_s = PROFILE_POST_S + (LEAVES_POST_S if shared else 0.0)
    # statements: each generation's variants are read back (perf script) side by side, on
    # the CPUs other perflab runs leave (measure/perf/runs.py, with all_cpus and run_threads
    # of machine/parallel.py)
    script_s = (
        processes * side_by_side_s(post_s, n, probe.counting_cpus, factor)
        if statement
        else n * PROFILE_COMMAND_POST_S * factor
    )
    toggles = n * CALL_GRAPH_REGION_S / max(probe.sample_s, 1e-3) if statement else 0.0
    minimum_s = n * processes * start_s + script_s + n * record_s + toggles * PROFILE_TOGGLE_S
    return LensCost(
        PROFILE,
        minimum_s=minimum_s,
        needs=f"{CALL_GRAPH_REGION_S:g} s recorded per variant, then symbolised",
        after_s=analysis_s(probe, PROFILE_ANALYSIS_S),
        shares=CALL_GRAPH_RECORDING if shared else "",
        shared_s=minimum_s if shared else 0.0,
    )
