"""Where the asm lens learns which code is hot, and which files the variant's process mapped.

`HotCodeSource` is the small seam to a profiler: anything that can profile the measured region
of one variant and return per-sample (object, symbol, offset) plus the mapped objects.
`PerfRecordSource` is the built-in one: a perf recording (`measure/perf/record.py`:
`record_statement_profile` / `record_command_profile`) with ``cpu-clock``, no call graphs and
symbol-table names, its samples counted per sampled instruction. For a statement in a run with
other lenses sharing the recording (the descriptors' `shares_recording`: the profile lens), it
reads the sampled instructions of that recording instead (measure/perf/recordings.py): one
recording per variant for all of them, made by whichever measures first. A command's recording
is its own: it records up to MAX_COMMAND_RUNS runs at 4 kHz for MIN_COMMAND_SAMPLES, where the
profile's 1 s of runs at 999 Hz gives a short command a handful of samples, and 4 kHz with DWARF
stacks would cost four times as much to unwind.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from perflab.budget.perf_costs import Reading
from perflab.lenses.asm.metric import ASM
from perflab.lenses.registry import recording_readers
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensContext
from perflab.measure.perf.record import (
    RecordedRegion,
    record_command_profile,
    record_statement_profile,
)
from perflab.measure.perf.recordings import (
    PerfRecordings,
    RecordedProfile,
    VariantRecording,
)
from perflab.measure.perf.runs import record_variants, shared_recipe
from perflab.measure.worker_client import WorkerLaunch, interpreter_for, variant_environment
from perflab.records.errors import PerflabError, ToolUnavailableError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Variant
from perflab.tool_drivers.perf import CallGraph, RecordOptions, probe_recording
from perflab.tool_output.perf_script import UNKNOWN

PROFILE_TARGET_MS = 400.0  # enough cpu-clock samples to rank functions; short on a shared machine
MIN_COMMAND_SAMPLES = 200  # a short command is recorded again until this many samples ...
MAX_COMMAND_RUNS = 10  # ... or this many runs
# cpu-clock sampling rate, above the profile lens's 999 Hz so a short region or command still gets
# enough samples to rank functions; without call stacks it stays cheap
SAMPLE_HZ = 4000


@dataclass(frozen=True)
class CodeSample:
    """Samples (or instruction counts) at one place in one object, aggregated."""

    object_path: str
    symbol: str  # as in the symbol table (mangled); "" when the profiler could not name it
    offset: int | None  # from the symbol's start
    weight: float = 1.0
    # where the symbol started in the process (ip - offset); None in regions stored before it
    # was kept: tells apart two same-named static functions of one object (numpy's dispatch)
    symbol_start: int | None = None


@dataclass(frozen=True)
class ProfiledRegion:
    """The samples of one variant's measured region, per sampled instruction, with the object files
    it mapped."""

    samples: tuple[CodeSample, ...]
    objects: tuple[str, ...]  # files with executable mappings in the variant's process
    unit: str = "samples"

    @property
    def total(self) -> float:
        return sum(sample.weight for sample in self.samples)

    def by_function(self) -> dict[tuple[str, str], float]:
        """(object, symbol) -> weight, heaviest first; unnamed code and non-files are left out."""
        weights: dict[tuple[str, str], float] = {}
        for sample in self.samples:
            if sample.symbol and sample.object_path.startswith("/"):
                key = (sample.object_path, sample.symbol)
                weights[key] = weights.get(key, 0.0) + sample.weight
        return dict(sorted(weights.items(), key=lambda item: -item[1]))

    def offsets(
        self, object_path: str, symbol: str, starts: Collection[int] | None = None
    ) -> dict[int, float]:
        """Samples per offset in `symbol`; only those of the copies starting at `starts` (in
        the process) when given."""
        costs: dict[int, float] = {}
        for sample in self.samples:
            if (
                sample.object_path == object_path
                and sample.symbol == symbol
                and sample.offset is not None
                and (starts is None or sample.symbol_start in starts)
            ):
                costs[sample.offset] = costs.get(sample.offset, 0.0) + sample.weight
        return costs

    def starts(self, object_path: str, symbol: str) -> dict[int, float]:
        """Where the sampled copies of `symbol` started in the process -> their samples; empty
        when the region does not know (stored before starts were kept)."""
        weights: dict[int, float] = {}
        for sample in self.samples:
            if (
                sample.object_path == object_path
                and sample.symbol == symbol
                and sample.symbol_start is not None
            ):
                start = sample.symbol_start
                weights[start] = weights.get(start, 0.0) + sample.weight
        return weights


class HotCodeSource(Protocol):
    """Where the asm lens gets a variant's sampled code from (perf record, or a test's fake)."""

    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        """Profile the measured region of `benchmark` under `variant`."""
        ...


def profiled_region(profile: RecordedProfile) -> ProfiledRegion:
    """The profile lens's samples as the asm lens keeps them: counted per sampled instruction,
    with "" for code perf could not name."""
    counts: Counter[tuple[str, str, int | None, int | None]] = Counter()
    for sample in profile.samples:
        leaf = sample.leaf
        if leaf is not None:
            start = None if leaf.offset is None else leaf.ip - leaf.offset
            counts[(leaf.dso, leaf.symbol, leaf.offset, start)] += 1
    samples = tuple(
        CodeSample(dso, "" if symbol.startswith(UNKNOWN) else symbol, offset, float(count), start)
        for (dso, symbol, offset, start), count in counts.items()
    )
    return ProfiledRegion(samples=samples, objects=profile.objects)


class PerfRecordSource:
    """cpu-clock sampling of the measured region; hardware events are not needed (nor available
    on most VMs)."""

    def __init__(self, target_ms: float = PROFILE_TARGET_MS, frequency_hz: int = SAMPLE_HZ) -> None:
        self.target_ms = target_ms
        self.options = RecordOptions(
            event="cpu-clock", frequency_hz=frequency_hz, call_graph=CallGraph.NONE, demangle=False
        )
        # the shared recording's readings of the benchmark and variants last asked for
        self._taken: list[VariantRecording] = []
        self._taken_for: tuple[PerfRecordings, str, tuple[str, ...]] | None = None

    @staticmethod
    def check(runner: ProcessRunner) -> None:
        if runner.which("perf") is None:
            raise ToolUnavailableError(
                "perf is not installed, so the asm lens cannot find hot functions",
                hint="install perf (linux-perf), or name the functions with --symbol REGEX",
            )
        try:
            probe_recording(runner, PerfRecordSource().options)
        except ToolUnavailableError as error:
            raise ToolUnavailableError(
                "perf record does not work here: " + (error.detail or "").strip()[-300:],
                hint="lower /proc/sys/kernel/perf_event_paranoid to 2 or less, "
                "or name the functions with --symbol REGEX",
            ) from error

    def profile(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> ProfiledRegion:
        readers = recording_readers(ASM, context.experiment.settings.metrics, benchmark.kind)
        try:
            if len(readers) > 1:
                return profiled_region(self._shared(benchmark, variant, context, readers))
            return profiled_region(self._record(benchmark, variant, context))
        except PerflabError as error:
            error.variant = error.variant or variant.name
            error.benchmark = error.benchmark or benchmark.name
            raise

    def _shared(
        self,
        benchmark: Benchmark,
        variant: Variant,
        context: LensContext,
        readers: Mapping[Metric, Reading],
    ) -> RecordedProfile:
        """This variant's sampled instructions in the recording `readers` share, its processes
        pooled: the recording is made for every variant at once, by the first lens to ask, and
        kept for the next one. The recording's options are the call graphs' (their event, 999
        Hz); the leaves of any of them are what this lens counts."""
        names = [v.name for v in context.experiment.variants]
        asked = (context.recordings, benchmark.name, tuple(names))
        if asked != self._taken_for:
            # the recipe every reader asks for, whichever asks first: one recording
            recipe = shared_recipe(context.runner, readers)
            self._taken = context.recordings.take(
                benchmark.name,
                names,
                recipe,
                Reading.LEAVES,
                lambda: record_variants(benchmark, context, recipe, ASM),
            )
            self._taken_for = asked
        return pooled(self._taken[names.index(variant.name)].parts)

    def _record(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> RecordedProfile:
        timeout_s = context.experiment.settings.sample_timeout_s
        if benchmark.kind is BenchmarkKind.STATEMENT:
            return record_statement_profile(
                context.runner,
                benchmark,
                variant,
                WorkerLaunch(
                    interpreter_for(variant, context.default_python),
                    cpu=context.cpu,
                    timeout_s=timeout_s,
                ),
                region=RecordedRegion(seconds=self.target_ms / 1e3, sample_ms=self.target_ms / 4),
                options=self.options,
            )
        return self._record_command(benchmark, variant, context)

    def _record_command(
        self, benchmark: Benchmark, variant: Variant, context: LensContext
    ) -> RecordedProfile:
        """A command's profile, run again until about MIN_COMMAND_SAMPLES were taken (at most
        MAX_COMMAND_RUNS runs): a short command gives a handful of samples, too few for any
        claim."""
        timeout_s = context.experiment.settings.sample_timeout_s

        def record(runs: int) -> RecordedProfile:
            return record_command_profile(
                context.runner,
                LaunchSpec(
                    argv=command_argv(
                        benchmark.command_for(variant), shell=context.experiment.settings.shell
                    ),
                    env=variant_environment(variant),
                    cwd=variant.cwd,
                    cpu=context.cpu,
                ),
                runs=runs,
                options=self.options,
                timeout_s=timeout_s,
            )

        first = record(1)
        taken = len(first.samples)
        if taken >= MIN_COMMAND_SAMPLES:
            return first
        more = min(MAX_COMMAND_RUNS, math.ceil(MIN_COMMAND_SAMPLES / max(taken, 1))) - 1
        if more <= 0:
            return first
        rest = record(more)
        return replace(
            first,
            samples=first.samples + rest.samples,
            loops=first.loops + rest.loops,
            region_ns=first.region_ns + rest.region_ns,
            objects=tuple(dict.fromkeys((*first.objects, *rest.objects))),
        )


def pooled(parts: Sequence[RecordedProfile]) -> RecordedProfile:
    """One variant's recordings in several processes as one: samples, loops and regions added,
    mapped objects in the order first seen."""
    first, *rest = parts
    return (
        replace(
            first,
            samples=tuple(s for part in parts for s in part.samples),
            loops=sum(part.loops for part in parts),
            region_ns=sum(part.region_ns for part in parts),
            objects=tuple(dict.fromkeys(o for part in parts for o in part.objects)),
        )
        if rest
        else first
    )


def region_to_json(region: ProfiledRegion) -> dict[str, object]:
    return {
        "unit": region.unit,
        "objects": list(region.objects),
        "samples": [
            [s.object_path, s.symbol, s.offset, s.weight, s.symbol_start] for s in region.samples
        ],
    }


def region_from_json(data: Mapping[str, Any]) -> ProfiledRegion:
    """A profiled region read back from its stored JSON."""
    raw = data.get("samples", [])
    assert isinstance(raw, list)
    return ProfiledRegion(
        samples=tuple(_sample_from_json(item) for item in raw),
        objects=tuple(str(o) for o in data.get("objects", [])),
        unit=str(data.get("unit", "samples")),
    )


def _sample_from_json(item: Sequence[Any]) -> CodeSample:
    """[object, symbol, offset, weight] and, since symbol starts were kept, the start."""
    o, s, off, w = item[:4]
    start = item[4] if len(item) > 4 else None
    return CodeSample(
        str(o),
        str(s),
        None if off is None else int(off),
        float(w),
        None if start is None else int(start),
    )
