"""The profile lens: `perf record` sampled only inside the measured region, hot symbols per variant,
per-symbol deltas between variants and folded stacks for a differential flame graph.

Statements: each variant's worker runs under `perf record --control ... --delay -1` (events start
disabled); the parent enables sampling just before each timed loop and disables it right after,
through the worker's handshake. Variants alternate block by block as in the time lens, so both
profiles see the same machine state. Commands: `perf record` around the whole process.

Call graphs: DWARF unwinding by default. Frame pointers are cheaper but most distribution builds
of Python and its extensions omit them, which cuts stacks off at the first such frame; LBR gives
short (32-entry) user-space stacks and needs a real PMU. DWARF costs ~16 KB per sample, which at
~1,000 samples per variant is fine. If perf cannot record DWARF call graphs, frame pointers are
used instead; the choice made is recorded with the profile.

perf falls back from `cycles` to `cpu-clock` without a PMU (VMs) and says nothing; the event that
was really sampled is read back with `perf evlist` and reported.

The recording itself is measure/perf/runs.py; for a statement, a run with other lenses that
share it (the asm lens) records once per variant for all (measure/perf/recordings.py), whichever
lens measures first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from perflab.budget.perf_costs import CALL_GRAPH_COMMAND_RUNS, CALL_GRAPH_REGION_S, Reading
from perflab.lenses.profile.analyse import (
    FOLDED,
    PROFILE_META,
    analyse_profiles,
    fallback_note,
)
from perflab.lenses.profile.metric import PROFILE
from perflab.lenses.registry import recording_readers
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.perf.recordings import Recipe, RecordedProfile
from perflab.measure.perf.runs import WALL_NS, record_variants, shared_recipe
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Experiment,
    Note,
    Severity,
    Variant,
)
from perflab.tool_drivers.perf import CallGraph, RecordOptions, find_perf, probe_recording
from perflab.tool_output.profile_stacks import folded_stacks


class ProfileLens:
    """The profile lens: samples call stacks of each variant's measured region with perf record and
    diffs the hot symbols."""

    metric = PROFILE

    def __init__(
        self,
        *,
        region_s: float = CALL_GRAPH_REGION_S,
        options: RecordOptions | None = None,
        max_command_runs: int = CALL_GRAPH_COMMAND_RUNS,
    ) -> None:
        self.region_s = region_s
        self.options = options or RecordOptions()
        self.max_command_runs = max_command_runs
        self._chosen: RecordOptions | None = None
        self._probe_events: list[str] = []

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        find_perf(runner)
        self._chosen, self._probe_events = probe_recording(runner, self.options)
        notes = []
        if self._chosen.call_graph is not self.options.call_graph:
            notes.append(
                Note(
                    Severity.WARNING,
                    f"perf cannot record {self.options.call_graph} call graphs here; "
                    f"using {self._chosen.call_graph}",
                    metric=PROFILE,
                )
            )
        probe = RecordedProfile(self._chosen.event, tuple(self._probe_events), CallGraph.NONE, ())
        if probe.fell_back:
            notes.append(fallback_note(self._chosen.event, self._probe_events))
        return notes

    def _options(self, runner: ProcessRunner) -> RecordOptions:
        if self._chosen is None:
            self._chosen, self._probe_events = probe_recording(runner, self.options)
        return self._chosen

    def recipe(self, benchmark: Benchmark, context: LensContext) -> Recipe:
        """The recording, and its readings: for a statement, every lens of the run that shares
        it (the descriptors' `shares_recording`) reads the same recording its own way."""
        metrics = context.experiment.settings.metrics
        return shared_recipe(
            context.runner,
            recording_readers(PROFILE, metrics, benchmark.kind),
            options=self._options(context.runner),
            region_s=self.region_s,
            max_command_runs=self.max_command_runs,
        )

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        variants = context.experiment.variants
        recipe = self.recipe(benchmark, context)
        recordings = context.recordings.take(
            benchmark.name,
            [v.name for v in variants],
            recipe,
            Reading.CALL_GRAPHS,
            lambda: record_variants(benchmark, context, recipe, self.metric),
        )
        for variant, recording in zip(variants, recordings, strict=True):
            for sample in recording.wall_samples:
                context.sink.add_sample(replace(sample, metric=self.metric, name=WALL_NS))
            for generation, profile in enumerate(recording.parts):
                self._store(benchmark, variant, profile, context, generation, len(recording.parts))

    def _store(
        self,
        benchmark: Benchmark,
        variant: Variant,
        profile: RecordedProfile,
        context: LensContext,
        generation: int = 0,
        processes: int = 1,
    ) -> None:
        sink = context.sink
        for kind, content in (
            (FOLDED, folded_stacks(profile.samples)),
            (PROFILE_META, json.dumps(profile.meta())),
        ):
            sink.add_artifact(
                Artifact(benchmark.name, variant.name, PROFILE, kind, content, generation)
            )
        if not profile.samples:
            sink.add_note(
                Note(
                    Severity.WARNING,
                    "perf recorded no samples inside the measured region"
                    + (
                        f" of worker process {generation + 1} of {processes}"
                        if processes > 1
                        else ""
                    ),
                    hint="the region is too short: raise the profile duration",
                    benchmark=benchmark.name,
                    variant=variant.name,
                    metric=PROFILE,
                )
            )

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_profiles(benchmark, variants, data, experiment)
