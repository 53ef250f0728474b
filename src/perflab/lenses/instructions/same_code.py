"""The instructions lens's hook for `same_work.py`: did the two variants execute the same code,
by their instruction counts per function."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from perflab.lenses.instructions import RESIDUE
from perflab.lenses.instructions.details import InstructionsDetails
from perflab.lenses.instructions.explain import FunctionDelta
from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.records.accounting import Presence
from perflab.records.code_findings import Finding, Seen
from perflab.records.model import Comparison

# Counts of the same code under callgrind differ between repeats and variants by the residue of
# the worker's handshake (reading the next request, the allocator), spread thinly over dozens of
# functions: bench/same_code_tolerance.py and docs/benchmarks.md measure it. 0.1% sits above
# that, ten times below the time lens's equivalence band; smaller changes are caught by the
# functions: one that runs in one variant only, or one whose count moves by more than
# FUNCTION_TOLERANCE of the total (pymalloc's state moves a few instructions per iteration).
COUNT_TOLERANCE = 1e-3
FUNCTION_TOLERANCE = 5e-4
# functions below RESIDUE instructions per iteration (or this fraction of the total) are that
# residue (drop_gil, _Py_read ... of the handshake), not code the benchmark executed
RESIDUE_FRACTION = 1e-5


def same_code(comparison: Comparison) -> Finding | None:
    """The finding of the lens's whole-count comparison; None for its other comparisons."""
    if comparison.event is None and isinstance(comparison.details, InstructionsDetails):
        return instructions_finding(comparison.details)
    return None


def _relative_spread(values: Sequence[float]) -> float:
    low, high = min(values), max(values)
    return (high - low) / low if low > 0 else math.inf


def instructions_finding(details: InstructionsDetails) -> Finding:
    """Same code: the repeats of each variant, and the two variants' medians, within
    COUNT_TOLERANCE of each other; no function above the residue run in one variant only, and
    no function's count moved by more than FUNCTION_TOLERANCE of the total (or the residue)."""
    base, other = details.baseline_repeats, details.variant_repeats
    if not base or not other:
        return Finding(INSTRUCTIONS, Seen.CANNOT_TELL, reason="no repeats stored")
    within = max(_relative_spread(base), _relative_spread(other))
    if within > COUNT_TOLERANCE:
        return Finding(
            INSTRUCTIONS,
            Seen.CANNOT_TELL,
            reason=f"counts moved {within:.1e} between repeats of one variant",
        )
    between = _relative_spread([statistics.median(base), statistics.median(other)])
    if between > COUNT_TOLERANCE:
        return Finding(INSTRUCTIONS, Seen.DIFFERENT, reason=f"counts differ by {between:.1e}")
    total = statistics.median(base)
    floor = max(RESIDUE, RESIDUE_FRACTION * total)
    executed = 0
    for delta in details.functions:
        if (why := _different_function(delta, floor, total)) is not None:
            return Finding(INSTRUCTIONS, Seen.DIFFERENT, reason=why)
        executed += max(abs(delta.baseline_self), abs(delta.variant_self)) >= floor
    if executed == 0:
        return Finding(INSTRUCTIONS, Seen.CANNOT_TELL, reason="no function above residue")
    tolerance = f"within {COUNT_TOLERANCE * 100:g}%"
    functions = f"the same {executed} functions"
    return Finding(
        INSTRUCTIONS,
        Seen.SAME,
        f"instruction counts {tolerance}, {functions}",
        same_work=f"the instruction counts are the same {tolerance} ({functions})",
        avx512_hidden=True,
        look_further="--cache-sim counts simulated cache misses",
    )


def _different_function(delta: FunctionDelta, floor: float, total: float) -> str | None:
    """Why this function says the code differs (it ran above the residue in one variant only,
    or its count moved beyond FUNCTION_TOLERANCE of the total), or None."""
    cost = max(abs(delta.baseline_self), abs(delta.variant_self))
    if delta.presence is not Presence.BOTH and cost >= floor:
        return f"{delta.name} ran in one variant only ({cost:g} per iteration)"
    # the allocator's state moves counts between its functions (pymalloc's pools and arenas: 8
    # instructions per iteration seen), the code stays the same
    if abs(delta.delta_self) > max(floor, FUNCTION_TOLERANCE * total):
        return f"{delta.name}: {delta.baseline_self:g} vs {delta.variant_self:g} per iteration"
    return None
