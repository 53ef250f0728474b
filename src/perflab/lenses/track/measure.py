"""The track lens: the number a statement's expression returns, read once in each of a few fresh
workers per variant (the variants alternating, as every lens's samples do), stored as it is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perflab.lenses.track.analyse import UNIT_ARTIFACT, VALUE, analyse_track
from perflab.lenses.track.cost import generations_of
from perflab.lenses.track.metric import TRACK
from perflab.machine.proc import ProcessRunner
from perflab.measure.lens import LensAnalysis, LensContext
from perflab.measure.sampler import InterleavedSampler, Slot
from perflab.measure.session import LensSession
from perflab.measure.worker_client import StatementWorker, WorkerOps
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Experiment,
    Note,
    Severity,
)

WORKER_OPS = "perflab.lenses.track.worker_ops"  # the `track_value` op


class TrackLens:
    """The track lens: a statement's value (a count, a size, a score), compared across
    variants."""

    metric = TRACK

    def preflight(self, experiment: Experiment, runner: ProcessRunner) -> list[Note]:
        metrics = experiment.settings.metrics
        commands = [
            b.name
            for b in experiment.benchmarks
            if b.kind is BenchmarkKind.COMMAND and TRACK in b.lenses_among(metrics)
        ]
        if commands:
            raise ConfigError(
                f"the track lens reads the value a statement returns; {commands[0]!r} is a command",
                hint="give the track lens statements whose expression is the number to compare "
                "(--stmt 'len(result)')",
            )
        return []

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        session = LensSession(benchmark, context, metric=TRACK)
        sampler = InterleavedSampler(session, TRACK, warmup_blocks=0)
        generations = generations_of(session.settings)
        units: set[int] = set()  # the variants whose unit is stored
        said: set[int] = set()  # the variants whose value was said not to be a number

        def generation(index: int) -> None:
            with session.generation(ops=(WorkerOps.from_module(WORKER_OPS),)) as workers:
                sampler.blocks(
                    lambda slot: _read(sampler, workers, slot, (units, said)),
                    generation=index,
                    blocks=1,
                )

        sampler.generations(generation, at_least=generations, at_most=generations, label="values")

    def analyse(
        self,
        benchmark: Benchmark,
        variants: Sequence[str],
        data: BenchmarkData,
        experiment: Experiment,
    ) -> LensAnalysis:
        return analyse_track(benchmark, variants, data, experiment.settings)


def _read(
    sampler: InterleavedSampler[LensSession],
    workers: Sequence[StatementWorker],
    slot: Slot,
    stored: tuple[set[int], set[int]],
) -> None:
    """One reading of the value in the slot's variant's worker, stored as a sample; the unit
    the set-up names, stored with the variant's first (`stored`: the variants whose unit is
    stored, and those said to give no number)."""
    units, said = stored
    worker = workers[slot.variant]
    session = sampler.session
    reply = worker.call({"op": "track_value", "expr": session.benchmark.stmt})
    if not reply.get("ok"):
        raise worker.failure(reply)
    value = reply.get("value")
    if not isinstance(value, int | float):
        # said, not failed: the variant is sound, only this lens has nothing to read, and the
        # run's other lenses measure it on
        if slot.variant not in said:
            said.add(slot.variant)
            session.context.sink.add_note(_not_a_number(session, slot, reply))
        return
    session.context.sink.add_sample(sampler.sample(slot, VALUE, float(value)))
    if reply.get("unit") is not None and slot.variant not in units:
        units.add(slot.variant)
        session.context.sink.add_artifact(
            Artifact(
                benchmark=session.benchmark.name,
                variant=session.variants[slot.variant].name,
                metric=TRACK,
                kind=UNIT_ARTIFACT,
                content=str(reply["unit"]),
            )
        )


def _not_a_number(session: LensSession, slot: Slot, reply: Mapping[str, Any]) -> Note:
    return Note(
        severity=Severity.WARNING,
        message=f"the track lens read no value: the statement's value is a "
        f"{reply.get('type', '?')}, not a number",
        hint="the track lens compares the number the statement's expression returns (an int or "
        "a float): --stmt 'len(result)'",
        benchmark=session.benchmark.name,
        variant=session.variants[slot.variant].name,
        metric=TRACK,
    )
