"""What perf costs and how the call-graph recording several lenses read is shaped: the figures
the lenses' cost models price (counters, profile, asm) and measure/perf/runs.py records by, and
the ways the recording is read back (`Reading`).

Constants only, importing nothing of perflab: here with the budget, below both the lens catalogue
(whose cost models price them and whose descriptors name the recording and its reading) and
`perflab.measure`, which records by them. Figures are of the budget's reference machine
(machine_speed.py gives the factor that scales them)."""

from __future__ import annotations

import enum

# perf stat / perf record around a worker: starting perf, and reading its output back
PERF_START_S = 0.3
# The perf recording of each variant's measured region with call graphs (measure/perf/runs.py):
# the profile lens's, which the asm lens reads too when a run has both. Statements: this long per
# variant, in this many independent worker processes (a function claimed to have appeared must be
# there in every one, not in one process's one-off work; 2 is the fewest that can tell);
# commands: runs until this long, at most this many.
CALL_GRAPH_REGION_S = 1.0
CALL_GRAPH_PROCESSES = 2
CALL_GRAPH_COMMAND_RUNS = 10
CALL_GRAPH_RECORDING = "perf recording"  # its name in `budget.costs.LensCost.shares`


class Reading(enum.Enum):
    """How a recording's perf.data is read back (`perf script`)."""

    CALL_GRAPHS = "call graphs"  # every sample's stack, names demangled for people
    LEAVES = "leaves"  # each sample's sampled instruction only, names as in the symbol table

    @property
    def demangle(self) -> bool:
        return self is Reading.CALL_GRAPHS

    @property
    def stacks(self) -> bool:
        return self is Reading.CALL_GRAPHS
