"""The perf recordings of one run that more than one lens reads: each benchmark's variants are
recorded once, under the options every reader's needs allow, and each reader takes its own
reading of the same samples (`Reading`). The profile lens reads call graphs with demangled
names; the asm lens reads the sampled instructions with symbol-table names; where a run has
both, whichever of them measures first records, and the other takes what was kept for it.

The store is the run's (`LensContext.recordings`): a reading is kept until its reader takes it,
so memory holds a benchmark's recording only between its two readers. Nothing here starts a
process (measure/perf/runs.py records).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.budget.perf_costs import Reading
from perflab.records.model import Sample
from perflab.tool_drivers.perf import CallGraph, RecordOptions
from perflab.tool_output.perf_script import ProfileSample
from perflab.tool_output.profile_stacks import HotSymbols, hot_symbols


@dataclass(frozen=True)
class RecordedProfile:
    """One variant's samples, with how they were taken."""

    requested_event: str
    sampled_events: tuple[str, ...]  # read back from the data file: the truth
    call_graph: CallGraph
    samples: tuple[ProfileSample, ...]
    loops: int = 0  # statement iterations inside the recorded regions (commands: runs)
    region_ns: int = 0  # wall time inside the recorded regions
    objects: tuple[str, ...] = ()  # files the process mapped executable, in load order

    @property
    def fell_back(self) -> bool:
        requested = self.requested_event.split(":")[0]
        return bool(self.sampled_events) and all(
            e.split(":")[0] != requested for e in self.sampled_events
        )

    def hot_symbols(self) -> HotSymbols:
        return hot_symbols(self.samples)

    def meta(self) -> dict[str, Any]:
        return {
            "requested_event": self.requested_event,
            "sampled_events": list(self.sampled_events),
            "fell_back": self.fell_back,
            "call_graph": str(self.call_graph),
            "samples": len(self.samples),
            "loops": self.loops,
            "region_ns": self.region_ns,
            "mapped_objects": list(self.objects),  # where analysis reads dispatch evidence
        }


@dataclass(frozen=True)
class Recipe:
    """How each variant of a benchmark is recorded, and the readings made of it."""

    options: RecordOptions  # as probed (`probe_recording`): what perf accepts here
    region_s: float  # recorded per variant, over all its processes
    processes: int  # statements: independent worker processes per variant
    max_command_runs: int  # commands: at most this many runs per variant
    readings: frozenset[Reading]
    # the label the block order is drawn with (beside the settings' seed): the lens whose
    # schedule it is, the same whichever lens records, so a recording shared is one schedule
    schedule: str


@dataclass(frozen=True)
class VariantRecording:
    """One variant's recording, read one way: a profile per worker process (commands: one,
    every run's samples pooled), and the wall time of every sample the recording took."""

    parts: tuple[RecordedProfile, ...]
    wall_samples: tuple[Sample, ...]


# every variant's recording, in the experiment's order of variants, one per reading
Recorded = Mapping[Reading, Sequence[VariantRecording]]


class PerfRecordings:
    """A run's recordings that are still to be read, by benchmark, variants and recipe."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, tuple[str, ...], Recipe, Reading], list[VariantRecording]] = {}
        self.recorded = 0  # recordings made (each of every variant of one benchmark)

    def take(
        self,
        benchmark: str,
        variants: Sequence[str],
        recipe: Recipe,
        reading: Reading,
        record: Callable[[], Recorded],
    ) -> list[VariantRecording]:
        """The variants' recording read as `reading`: recorded now (`record`) unless another
        reader recorded it already; the other readings are kept for their readers."""
        key = (benchmark, tuple(variants), recipe)
        if (*key, reading) not in self._kept:
            by_reading = record()
            self.recorded += 1
            for each_reading, recordings in by_reading.items():
                self._kept[(*key, each_reading)] = list(recordings)
        return self._kept.pop((*key, reading))
