"""Every variant of a benchmark recorded under `perf record` for the run's recordings
(measure/perf/recordings.py), read back once per reading the recipe asks for.

Statements: each variant in `Recipe.processes` independent workers, one generation after the
other, each recording its share of `region_s`. Each worker runs under `perf record --control
... --delay -1` (events start disabled); sampling is enabled just before each timed loop and
disabled right after, through the worker's handshake. Variants alternate block by block as in the
time lens, so every profile sees the same machine state; warm-up blocks are sampled, not
recorded. Commands: blocks of one run per variant under `perf record`, until every variant
recorded `region_s` or `max_command_runs` blocks ran, the runs' samples pooled.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perflab.budget.perf_costs import (
    CALL_GRAPH_COMMAND_RUNS,
    CALL_GRAPH_PROCESSES,
    CALL_GRAPH_REGION_S,
    Reading,
)
from perflab.machine.parallel import all_cpus, run_threads, runs_real_processes
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.commands import command_argv
from perflab.measure.lens import LensContext
from perflab.measure.perf.record import ProfiledWorker
from perflab.measure.perf.recordings import (
    Recipe,
    Recorded,
    RecordedProfile,
    VariantRecording,
)
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession, WorkerWrap, loops_per_variant
from perflab.measure.worker_client import variant_environment
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Sample, Variant
from perflab.tool_drivers.perf import (
    CommandUnderPerf,
    RecordOptions,
    find_perf,
    probe_recording,
    read_profile,
)
from perflab.tool_output.perf_script import ProfileSample

WALL_NS = "wall_ns"  # the name of the recorded regions' wall-time samples


def shared_recipe(
    runner: ProcessRunner,
    readers: Mapping[Metric, Reading],
    *,
    options: RecordOptions | None = None,
    region_s: float = CALL_GRAPH_REGION_S,
    max_command_runs: int = CALL_GRAPH_COMMAND_RUNS,
) -> Recipe:
    """The recording with call graphs that `readers` read: the run's lenses sharing it, in the
    order they are listed, each with its `Reading` (their descriptors' `shares_recording`,
    `registry.recording_readers`). Read back every way one of them reads it, its blocks in the
    order drawn for the first of them, so that whichever asks first gets the recipe the others
    ask for too: one recording. Every sampled instruction is in it, whatever the event and
    call graphs. `options` as probed already, or `RecordOptions()` as perf here accepts them."""
    return Recipe(
        options=options or probe_recording(runner, RecordOptions())[0],
        region_s=region_s,
        processes=CALL_GRAPH_PROCESSES,
        max_command_runs=max_command_runs,
        readings=frozenset(readers.values()),
        schedule=next(iter(readers)),
    )


def record_variants(
    benchmark: Benchmark, context: LensContext, recipe: Recipe, metric: Metric
) -> Recorded:
    """Every variant's recording, read as each of `recipe.readings` asks; its wall-time samples
    and progress are `metric`'s (the lens that records)."""
    sampler = InterleavedSampler(LensSession(benchmark, context, schedule=recipe.schedule), metric)
    with private_folder("profile") as tmp:
        if benchmark.kind is BenchmarkKind.STATEMENT:
            return _StatementRecording(sampler, recipe, Path(tmp)).record()
        return _CommandRecording(sampler, recipe, Path(tmp)).record()


class _StatementRecording:
    """A statement's variants, each in `recipe.processes` workers under perf record."""

    def __init__(self, sampler: InterleavedSampler[LensSession], recipe: Recipe, tmp: Path) -> None:
        self.sampler = sampler
        self.recipe = recipe
        self.tmp = tmp
        variants = len(sampler.session.variants)
        self.parts = {
            r: [list[RecordedProfile]() for _ in range(variants)] for r in recipe.readings
        }
        self.wall_samples = [list[Sample]() for _ in range(variants)]

    def record(self) -> Recorded:
        processes = self.recipe.processes
        self.sampler.generations(self._generation, at_least=processes, at_most=processes)
        return {
            reading: [
                VariantRecording(tuple(parts), tuple(walls))
                for parts, walls in zip(self.parts[reading], self.wall_samples, strict=True)
            ]
            for reading in self.recipe.readings
        }

    def _generation(self, generation: int) -> None:
        session = self.sampler.session
        variants = session.variants
        workers: dict[int, ProfiledWorker] = {}

        def wrap(index: int) -> WorkerWrap:
            workers[index] = ProfiledWorker(
                session.context.runner,
                options=self.recipe.options,
                data_path=self.tmp / f"{variants[index].name}-{generation}.perf.data",
            )
            return workers[index].wrap

        with session.generation(wrap=wrap) as started:
            for index, worker in enumerate(started):
                workers[index].started(worker)
            profiled = [workers[i] for i in range(len(variants))]
            self._sample_generation(profiled, generation)
            for one in profiled:
                one.note_mapped_objects()
        self._read(profiled)

    def _read(self, profiled: Sequence[ProfiledWorker]) -> None:
        """Closed: every perf record has written its data, and nothing is measured any more,
        so the variants' perf script runs may share every CPU."""
        readings = sorted(self.recipe.readings, key=lambda r: r.value)
        jobs: list[Callable[[], RecordedProfile]] = [
            functools.partial(one.recorded, demangle=reading.demangle, stacks=reading.stacks)
            for reading in readings
            for one in profiled
        ]
        context = self.sampler.session.context
        with all_cpus(context.cpu):
            parallel = runs_real_processes(context.runner)
            read = run_threads(jobs, parallel=parallel)
        for at, profile in enumerate(read):
            reading, variant = divmod(at, len(profiled))
            self.parts[readings[reading]][variant].append(profile)

    def _sample_generation(self, workers: Sequence[ProfiledWorker], generation: int) -> None:
        """Blocks of this generation until every variant recorded its share of `region_s`
        (warm-up blocks are sampled, not recorded)."""
        sampler = self.sampler
        settings = sampler.session.settings
        loops = loops_per_variant(workers, int(settings.sample_target_ms * 1e6))
        region_s = self.recipe.region_s
        processes = self.recipe.processes
        share_s = region_s / processes

        def measure(slot: Slot) -> None:
            own = loops[slot.variant]
            measured = workers[slot.variant].sample(own, record=not slot.warmup)
            self.wall_samples[slot.variant].append(
                sampler.sample(slot, WALL_NS, measured.wall_ns, loops=own, cpu=measured.cpu)
            )

        def enough(blocks: int) -> bool:
            recorded_s = min(w.region_ns for w in workers) / 1e9
            done_s = generation * share_s + recorded_s
            sampler.progress(
                f"process {generation + 1} of {processes}, block {blocks}, "
                f"{done_s:.1f} s recorded per variant",
                recorded_share(done_s, region_s),
            )
            return recorded_s >= share_s

        sampler.blocks(measure, generation=generation, enough=enough)


def recorded_share(recorded_s: float, region_s: float) -> float:
    """The part of a recording done, for progress: a recipe of no region is done at once."""
    return min(1.0, recorded_s / region_s) if region_s > 0 else 1.0


@dataclass
class _CommandRuns:
    """One variant's runs of a command under `perf record`, pooled as they come, per reading."""

    samples: dict[Reading, list[ProfileSample]]
    events: tuple[str, ...] = ()
    objects: dict[str, None] = field(default_factory=dict)
    region_ns: int = 0
    wall_samples: list[Sample] = field(default_factory=list)

    def profile(self, recipe: Recipe, reading: Reading, runs: int) -> RecordedProfile:
        options = recipe.options
        return RecordedProfile(
            options.event,
            self.events,
            options.call_graph,
            tuple(self.samples[reading]),
            runs,
            self.region_ns,
            objects=tuple(self.objects),
        )


class _CommandRecording:
    """A command's variants, in blocks of one run each under perf record."""

    def __init__(self, sampler: InterleavedSampler[LensSession], recipe: Recipe, tmp: Path) -> None:
        self.sampler = sampler
        self.recipe = recipe
        self.tmp = tmp
        self.context = sampler.session.context
        self.perf = find_perf(self.context.runner)
        self.runs = [_CommandRuns({r: [] for r in recipe.readings}) for _ in self.variants]

    @property
    def variants(self) -> tuple[Variant, ...]:
        return self.context.experiment.variants

    def record(self) -> Recorded:
        recipe = self.recipe

        def enough(blocks: int) -> bool:
            recorded_ns = min(r.region_ns for r in self.runs)
            return recorded_ns >= recipe.region_s * 1e9 or blocks >= recipe.max_command_runs

        blocks = self.sampler.blocks(self._measure, enough=enough)
        return {
            reading: [
                VariantRecording((r.profile(recipe, reading, blocks),), tuple(r.wall_samples))
                for r in self.runs
            ]
            for reading in recipe.readings
        }

    def _measure(self, slot: Slot) -> None:
        context = self.context
        variant = self.variants[slot.variant]
        data_path = self.tmp / f"{slot.variant}-{slot.block}.data"
        command = CommandUnderPerf(
            self.perf,
            self.recipe.options,
            LaunchSpec(
                argv=command_argv(
                    self.sampler.session.benchmark.command_for(variant),
                    shell=context.experiment.settings.shell,
                ),
                env=variant_environment(variant),
                cwd=variant.cwd,
                cpu=context.cpu,
            ),
            context.experiment.settings.sample_timeout_s,
        )
        wall_ns = command.run(context.runner, data_path)
        self._read(self.runs[slot.variant], data_path)
        self.runs[slot.variant].region_ns += wall_ns
        # every run is recorded: no warm-up (a command starts afresh each time)
        self.runs[slot.variant].wall_samples.append(
            Sample(
                benchmark=self.sampler.session.benchmark.name,
                variant=variant.name,
                metric=self.sampler.metric,
                name=WALL_NS,
                value=wall_ns,
                block=slot.block,
                position=slot.position,
            )
        )

    def _read(self, pooled: _CommandRuns, data_path: Path) -> None:
        for reading in self.recipe.readings:
            data = read_profile(
                self.context.runner,
                data_path,
                perf=self.perf,
                demangle=reading.demangle,
                stacks=reading.stacks,
            )
            pooled.samples[reading] += data.samples
            pooled.events = pooled.events or data.sampled_events
            pooled.objects.update(dict.fromkeys(data.objects))
