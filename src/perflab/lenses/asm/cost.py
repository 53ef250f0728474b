"""The asm lens's cost model for the budget's plan."""

from __future__ import annotations

from perflab.budget.costs import CostProbe, LensCost, analysis_s, side_by_side_s
from perflab.budget.perf_costs import CALL_GRAPH_RECORDING, PERF_START_S
from perflab.lenses.asm.metric import ASM
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings

# each variant's loop recorded this long (sources.py's PROFILE_TARGET_MS), without a call
# graph, so that perf script reads it back quickly; then its hot functions read, disassembled
# and annotated, with the analysis cache warm (a first run on a machine reads every object once
# and takes longer; docs/benchmarks.md has the runs these come from)
ASM_REGION_S = 0.4
ASM_SCRIPT_S = 0.4
ASM_POST_S = 0.4
# after measuring: pairing and diffing the hot functions' listings, their instruction mix, and
# rendering them
ASM_ANALYSIS_S = 1.5


def asm_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """One worker per variant under perf record (no call graph) for ASM_REGION_S of its loop,
    one after another, read back with perf script; then every variant's hot functions read and
    disassembled side by side on the CPUs other perflab runs leave. A statement whose recording
    other lenses of the run read too (`CostProbe.shared_recordings`) is recorded once for all
    (sources.py): the recording is in the cost of the lens that makes it with call graphs,
    charged to whichever of them runs first (`budget.charge_once`)."""
    n = probe.variants
    factor = probe.speed.factor
    post_s = side_by_side_s(ASM_POST_S, n, probe.counting_cpus, factor)
    after_s = analysis_s(probe, ASM_ANALYSIS_S)
    statement = probe.kind is BenchmarkKind.STATEMENT
    if statement and CALL_GRAPH_RECORDING in probe.shared_recordings:
        return LensCost(
            ASM,
            minimum_s=post_s,
            needs="the profile's recording, then each variant's hot functions disassembled",
            after_s=after_s,
            shares=CALL_GRAPH_RECORDING,
        )
    start_s = (probe.startup_s if statement else 0.0) + PERF_START_S * factor
    record_s = max(ASM_REGION_S, probe.sample_s)
    per_variant_s = start_s + record_s + ASM_SCRIPT_S * factor
    return LensCost(
        ASM,
        minimum_s=n * per_variant_s + post_s,
        needs="a profile per variant, then its hot functions disassembled",
        after_s=after_s,
    )
