"""What every lens implements, and what it is given.

A lens measures one benchmark for all variants (`measure`), writing raw samples and artifacts to a
sink as soon as they exist, and later turns what was stored into comparisons (`analyse`). Because
`analyse` only reads stored data, `perflab show` re-derives every comparison from the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from perflab.machine.proc import ProcessRunner
from perflab.measure.perf.recordings import PerfRecordings
from perflab.records.kinds import Metric
from perflab.records.lens_findings import LensFindings
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Comparison,
    Experiment,
    Measurement,
    Note,
    Sample,
    merge_info,
)
from perflab.records.run_facts import VariantInfo

if TYPE_CHECKING:
    from perflab.budget.costs import ServerRounds
    from perflab.machine.cpu_lock import CpuTurns
    from perflab.measure.fork_server import ForkServers

# the artifact (any lens's metric) that marks a variant as failed for that lens, with the
# reason: the analysis leaves the variant out and keeps every comparison without it
FAILED_ARTIFACT = "failed"

# BenchmarkData and merge_info live in perflab.records.model (the store needs them);
# re-exported here
__all__ = [
    "FAILED_ARTIFACT",
    "BenchmarkData",
    "Lens",
    "LensAnalysis",
    "LensContext",
    "MeasurementSink",
    "MemorySink",
    "NullProgress",
    "PlanReporter",
    "ProgressReporter",
    "merge_info",
]


class MeasurementSink(Protocol):
    """Where measurements go the moment they exist (the store, or memory in tests)."""

    def add_sample(self, sample: Sample) -> None: ...

    def add_artifact(self, artifact: Artifact) -> None: ...

    def add_note(self, note: Note) -> None: ...

    def add_variant_info(self, variant: str, info: VariantInfo) -> None:
        """Facts about a variant as measured (interpreter version, executable ...)."""
        ...

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        """The samples measured so far (for lenses that stop once precise enough)."""
        ...


class ProgressReporter(Protocol):
    """Where a lens says how far it has got (the terminal's progress line, or nothing)."""

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None: ...


@runtime_checkable
class PlanReporter(Protocol):
    """A progress display that also shows each benchmark's budget plan and its ETA."""

    def plan(self, *, benchmark: str, text: str, eta_s: float) -> None: ...


class NullProgress:
    """A progress reporter that shows nothing (the Python API's default)."""

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None:
        pass


@dataclass
class MemorySink:
    """A sink that keeps everything in lists: for tests and for the Python API without a store."""

    samples: list[Sample] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    variant_info: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_sample(self, sample: Sample) -> None:
        self.samples.append(sample)

    def add_artifact(self, artifact: Artifact) -> None:
        self.artifacts.append(artifact)

    def add_note(self, note: Note) -> None:
        self.notes.append(note)

    def add_variant_info(self, variant: str, info: VariantInfo) -> None:
        self.variant_info[variant] = merge_info(self.variant_info.get(variant, {}), info.to_json())

    def data_for(self, benchmark: str, metric: Metric) -> BenchmarkData:
        return BenchmarkData(
            samples=tuple(
                s for s in self.samples if s.benchmark == benchmark and s.metric == metric
            ),
            artifacts=tuple(
                a for a in self.artifacts if a.benchmark == benchmark and a.metric == metric
            ),
        )


@dataclass(frozen=True)
class LensContext:
    """What a lens measures one benchmark with: the experiment, the process seam, the sink, its
    CPU and its share of the budget."""

    experiment: Experiment
    runner: ProcessRunner
    sink: MeasurementSink
    progress: ProgressReporter
    cpu: int | None  # the CPU measuring processes are pinned to; None: not pinned
    default_python: str  # interpreter for variants without python=
    # this lens's share of the benchmark's budget (budget/plan.py); None: all of it
    budget_s: float | None = None
    # statement workers are forked from one server per variant that imported the set-up's
    # modules once (measure/fork_server.py), rather than started fresh each generation
    fork_servers: ForkServers | None = None
    # the time lens: fork its generations from rounds of servers it starts itself (the plan's
    # choice when the set-up's imports are expensive, budget/costs.py); None: fresh workers
    server_rounds: ServerRounds | None = None
    # the run's perf recordings that more than one lens reads (measure/perf/recordings.py): kept by
    # `replace`, so every benchmark and lens of a run shares the one store
    recordings: PerfRecordings = field(default_factory=PerfRecordings)
    # turns on the measuring CPU with other perflab runs on it, one sample block at a time
    turns: CpuTurns | None = None
    # the run's clock (ns): every lens spends its share by it (`LensSession`, callgrind's
    # counting); a test's fake one spends the share without waiting for it
    clock_ns: Callable[[], int] = time.monotonic_ns
    # blocks until the variants' native runs that fill their JIT caches are done (the engine's,
    # beside a lens whose descriptor says `starts_before_native_fill`): such a lens calls it
    # before any of its processes runs a set-up, which would otherwise compile under valgrind
    native_fill_done: Callable[[], None] = lambda: None

    @property
    def lens_budget_s(self) -> float:
        """The seconds this lens may use for this benchmark."""
        return self.experiment.settings.budget_s if self.budget_s is None else self.budget_s


@dataclass(frozen=True)
class LensAnalysis:
    """What a lens's analysis of a run returns: its comparisons, notes, findings and per-variant
    figures."""

    comparisons: tuple[Comparison, ...] = ()
    notes: tuple[Note, ...] = ()
    # what the lens found beyond its comparisons (its own record; the JSON document's
    # top-level fields); None: nothing
    findings: LensFindings | None = None
    # each variant's own figures (a run of one variant has nothing else)
    measurements: tuple[Measurement, ...] = ()


class Lens(Protocol):
    """A lens: checks its tools, measures a benchmark into the sink, and analyses the stored
    samples."""

    metric: Metric

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        """Check the tools this lens needs before anything is measured.

        Raise ToolUnavailableError (with a hint naming the fix) when the lens cannot run at all;
        return notes for partial availability."""
        ...

    def measure(self, benchmark: Benchmark, context: LensContext) -> None: ...

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        """Compare each non-baseline variant (variants[1:]) with the baseline (variants[0])."""
        ...
