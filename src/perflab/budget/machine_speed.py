"""How much slower than the cost models' reference machine this machine runs now: the reference
programs the probe times (engine/prepare/probe.py), their figures there, and the factor that scales
every tool constant of the cost models. Pure."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

# The reference the constants' machine is compared against, timed by the probe
# (engine/prepare/probe.py): a Python process (no site, isolated) doing a fixed amount of work,
# which prints the CPU time it used; and valgrind's callgrind starting an interpreter with
# instrumentation off, as a lens that runs valgrind starts its workers. Their wall times on the
# constants' reference machine, quiet (2-vCPU AMD EPYC VM, docs/benchmarks.md "The budget").
REFERENCE_LOOPS = 1_000_000
REFERENCE_PROGRAM = (
    "import time\n"
    "x = 0\n"
    f"for i in range({REFERENCE_LOOPS}):\n"
    "    x += i\n"
    "print(time.process_time())"
)
REFERENCE_S = 0.13  # the reference program's wall time on the reference machine
VALGRIND_REFERENCE_S = 0.95  # callgrind starting an interpreter there
REFERENCE_RUNS = 3  # the reference program's runs in one probe (their median is the speed)
# Probes of the last minutes on this machine join this run's (engine/prepare/recent_probes.py): the
# plan uses the median of this probe's figures and at most RECENT_PROBES of the last
# RECENT_PROBES_S, since one probe samples well under a second of a load that moves within
# seconds; older probes describe another load.
RECENT_PROBES = 4
RECENT_PROBES_S = 600.0
# a factor from one short measurement: never below half (a much faster machine still pays
# fixed latencies), never above this (a reference run that hung says nothing more)
SLOWDOWN_RANGE = (0.5, 20.0)

NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def in_words(count: int) -> str:
    """A count in words up to nine ("two recent probes"), in digits above."""
    return NUMBER_WORDS[count] if 0 <= count < len(NUMBER_WORDS) else str(count)


def _slowdown(measured_s: float | None, reference_s: float) -> float | None:
    if measured_s is None or not math.isfinite(measured_s) or measured_s <= 0:
        return None
    low, high = SLOWDOWN_RANGE
    return min(high, max(low, measured_s / reference_s))


@dataclass(frozen=True)
class MachineSpeed:
    """How much slower than the constants' reference machine this machine runs now, from the
    probe's reference runs (None: not measured; the factor is then 1). The tool constants
    (perf's start-up, symbolisation, disassembly, callgrind's counted part, the analysis after
    measuring) are multiplied by `factor`, valgrind's by `valgrind_factor`."""

    reference_s: float | None = None  # the reference program's wall time here and now
    reference_cpu_s: float | None = None  # the CPU time it reported using
    valgrind_s: float | None = None  # valgrind's reference run, when a lens runs valgrind
    # the same runs of recent probes on this machine (RECENT_PROBES_S), newest last
    recent_reference_s: tuple[float, ...] = ()
    recent_valgrind_s: tuple[float, ...] = ()

    @property
    def settled_reference_s(self) -> float | None:
        """The reference program's time the plan uses: the median of this probe's and the
        recent ones'."""
        return _median_with(self.reference_s, self.recent_reference_s)

    @property
    def settled_valgrind_s(self) -> float | None:
        return _median_with(self.valgrind_s, self.recent_valgrind_s)

    @property
    def factor(self) -> float:
        return _slowdown(self.settled_reference_s, REFERENCE_S) or 1.0

    @property
    def valgrind_factor(self) -> float:
        """valgrind's own slowdown; without a valgrind reference, the reference program's."""
        return _slowdown(self.settled_valgrind_s, VALGRIND_REFERENCE_S) or self.factor

    def with_recent(self, recent: Sequence[MachineSpeed]) -> MachineSpeed:
        """This probe's speed, joined by the last RECENT_PROBES of `recent` (oldest first)."""
        references = tuple(s.reference_s for s in recent if s.reference_s is not None)
        valgrinds = tuple(s.valgrind_s for s in recent if s.valgrind_s is not None)
        return replace(
            self,
            recent_reference_s=references[-RECENT_PROBES:] if self.reference_s else (),
            recent_valgrind_s=valgrinds[-RECENT_PROBES:] if self.valgrind_s else (),
        )

    @property
    def measured(self) -> bool:
        return self.reference_s is not None or self.valgrind_s is not None

    def describe(self) -> str:
        """What was measured and the factors used, for the plan's note."""
        if not self.measured:
            return "machine speed not measured: tool costs as on the reference machine"
        parts = []
        if self.reference_s is not None:
            cpu = (
                f", {self.reference_cpu_s:.2f} s of CPU" if self.reference_cpu_s is not None else ""
            )
            parts.append(
                f"a reference process took {self.reference_s:.2f} s{cpu}"
                f"{_recent_words(self.settled_reference_s, self.recent_reference_s)} "
                f"({REFERENCE_S:g} s on the reference machine): tool costs x{self.factor:.1f}"
            )
        if self.valgrind_s is not None:
            parts.append(
                f"valgrind's start-up took {self.valgrind_s:.2f} s"
                f"{_recent_words(self.settled_valgrind_s, self.recent_valgrind_s)} "
                f"({VALGRIND_REFERENCE_S:g} s there): valgrind costs x{self.valgrind_factor:.1f}"
            )
        return "; ".join(parts)


def _median_with(own: float | None, recent: Sequence[float]) -> float | None:
    return None if own is None else statistics.median((own, *recent))


def _recent_words(settled_s: float | None, recent: Sequence[float]) -> str:
    if not recent or settled_s is None:
        return ""
    probes = "probe" if len(recent) == 1 else "probes"
    return (
        f", {settled_s:.2f} s with {in_words(len(recent))} recent {probes} on this machine "
        "(the median)"
    )
