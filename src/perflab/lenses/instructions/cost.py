"""The instructions lens's cost model for the budget's plan (callgrind's runs)."""

from __future__ import annotations

import math

from perflab.budget.costs import (
    VALGRIND_SETUP_SLOWDOWN,
    CostProbe,
    LensCost,
    analysis_s,
    fork_servers_for,
)
from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.lenses.shared_options import cache_sim_of
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings

# callgrind: valgrind's own start-up, and the counted part of one process (warm-up,
# calibration, two repeats of a statement and an empty loop of ~20 M instructions each, the
# dumps read) where the worker switches instrumentation around each loop (the memory lens: cache
# simulation). The seconds are the reference machine's (budget/machine_speed.py), scaled by this
# machine's measured valgrind factor, since the plan is made before any callgrind process runs;
# the interpreter's start-up the probe timed here is multiplied by VALGRIND_SETUP_SLOWDOWN
# (budget/costs.py, which every valgrind lens's cost and the run's notes share)
VALGRIND_START_S = 1.0
CALLGRIND_COUNTED_S = 3.0
# the same where the worker switches instrumentation on once and toggles collection around each
# loop (statements without cache simulation: no translations thrown away per loop)
CALLGRIND_TOGGLED_COUNTED_S = 1.5
# commands run counted from start to end: callgrind's slowdown of native code is 20-100x, but a
# short command's run is mostly process start-up (and, on a loaded machine, waiting for a CPU),
# which the probe's wall time inflates: the low end
CALLGRIND_COMMAND_SLOWDOWN = 20.0
# after measuring: parsing callgrind's per-function and per-address costs
INSTRUCTIONS_ANALYSIS_S = 1.0


def instructions_cost(
    probe: CostProbe, settings: Settings, *, processes: int = 2, toggled: bool | None = None
) -> LensCost:
    """Statements: `processes` worker processes per variant (lenses/instructions) on the CPUs
    the probe found free of other perflab runs: fresh processes all at once where they fit on
    them, else fork servers per variant (two where one starts quickly under valgrind, else one;
    one at a time; as many variants at a time as CPUs) each importing the set-up once under
    callgrind, whose children each run the set-up and count one after another. `toggled`: the
    workers toggle collection rather than switch instrumentation around each loop (None: unless
    the cache is simulated)."""
    if toggled is None:
        toggled = not cache_sim_of(settings)
    n = probe.variants
    valgrind = probe.speed.valgrind_factor
    if probe.kind is BenchmarkKind.COMMAND:
        # the probe's run was timed here and now: only valgrind's own start-up is scaled
        per_variant = VALGRIND_START_S * valgrind + CALLGRIND_COMMAND_SLOWDOWN * probe.sample_s
        minimum_s = n * per_variant
        needs = f"one callgrind process per variant (~{per_variant:.0f} s each)"
    else:
        # the interpreter's start-up was timed here and now (startup_s); valgrind's start-up
        # and the counted part are the reference machine's, scaled
        start_s = VALGRIND_START_S * valgrind + VALGRIND_SETUP_SLOWDOWN * probe.startup_s
        counted_s = (CALLGRIND_TOGGLED_COUNTED_S if toggled else CALLGRIND_COUNTED_S) * valgrind
        cpus = max(1, probe.counting_cpus)
        if n * processes <= cpus:
            minimum_s = start_s + counted_s
            needs = f"{processes} callgrind process{'es' if processes > 1 else ''} per variant"
            needs += f", all at once (~{minimum_s:.0f} s)"
        else:
            minimum_s, needs = _forked_s(probe, processes, start_s=start_s, counted_s=counted_s)
    return LensCost(
        INSTRUCTIONS,
        minimum_s=minimum_s,
        needs=needs,
        after_s=analysis_s(probe, INSTRUCTIONS_ANALYSIS_S),
    )


def _forked_s(
    probe: CostProbe, processes: int, *, start_s: float, counted_s: float
) -> tuple[float, str]:
    """The variants' processes as children of fork servers, variants in turn on the counting
    CPUs: the seconds, and what they are said as. Each server imports the set-up's modules once;
    each child runs the set-up itself under valgrind (a JIT's tracing and loading, a large array
    built), a server's first child's priced in `start_s`."""
    # two servers only where one starts quickly: the rule the counter applies to the first
    # server's measured start
    servers = min(fork_servers_for(start_s), processes)
    setup_s = VALGRIND_SETUP_SLOWDOWN * probe.fork_s
    per_variant = servers * start_s + processes * counted_s + (processes - servers) * setup_s
    cpus = max(1, probe.counting_cpus)
    plural = "s" if servers > 1 else ""
    needs = (
        f"{servers} callgrind fork server{plural} per variant in turn, {processes} "
        f"children counted (~{per_variant:.0f} s per variant, {cpus} at once)"
    )
    return math.ceil(probe.variants / cpus) * per_variant, needs
