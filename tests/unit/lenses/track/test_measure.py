"""The track lens's measuring loop (`TrackLens`) against scripted workers: one value per fresh
worker, the unit the set-up names, a value that is not a number refused, and commands refused
before anything runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from perflab.lenses.registry import descriptor_for, lens_for
from perflab.lenses.track import TRACK
from perflab.lenses.track.analyse import UNIT_ARTIFACT, VALUE
from perflab.lenses.track.measure import TrackLens
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Experiment, Severity, Variant
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.lenses.track.measure"

VARIANTS = (Variant("A"), Variant("B", env={"MORE": "1"}))


def _value(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
    more = (spec.env or {}).get("MORE") == "1"
    return {"ok": True, "value": 15.0 if more else 10.0, "type": "int", "unit": "items"}


def _experiment(benchmark: Benchmark) -> Experiment:
    settings = dataclasses.replace(FAST, metrics=(Metric.TIME, TRACK), min_generations=2)
    return Experiment(benchmarks=(benchmark,), variants=VARIANTS, settings=settings)


def _run(benchmark: Benchmark, runner: FakeRunner) -> tuple[MemorySink, Experiment]:
    sink = MemorySink()
    experiment = _experiment(benchmark)
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=sink,
        progress=NullProgress(),
        cpu=None,
        default_python="/usr/bin/python3",
    )
    TrackLens().measure(benchmark, context)
    return sink, experiment


def test_the_lens_is_registered_by_its_descriptor_alone() -> None:
    assert isinstance(lens_for(TRACK), TrackLens)
    assert descriptor_for(TRACK).worker.handlers == "perflab.lenses.track.worker_ops"
    assert descriptor_for(TRACK).suite_kinds == ("track", "mem")


def test_each_fresh_worker_gives_one_value_and_the_ratio_is_exact() -> None:
    worker = ScriptedWorker(lambda spec: 1000.0, handlers={"track_value": _value})
    benchmark = Benchmark("count", stmt="len(items)", setup="items = [1] * 10")
    sink, experiment = _run(benchmark, FakeRunner().on_spawn("statement_worker", worker))

    assert worker.started == 2 * 4  # TRACK_GENERATIONS fresh workers per variant
    asked = [r for _, r in worker.requests if r["op"] == "track_value"]
    assert len(asked) == 8 and asked[0]["expr"] == "len(items)"
    assert {s.name for s in sink.samples} == {VALUE} and not any(s.warmup for s in sink.samples)
    data = sink.data_for("count", TRACK)
    assert {a.content for a in data.artifacts if a.kind == UNIT_ARTIFACT} == {"items"}
    (comparison,) = TrackLens().analyse(benchmark, ["A", "B"], data, experiment).comparisons
    assert (comparison.ratio, comparison.ci_low, comparison.ci_high) == (1.5, 1.5, 1.5)
    assert comparison.verdict is Verdict.SLOWER and comparison.unit == "items"
    assert comparison.to_json()["deterministic"] is True


def test_a_value_that_is_not_a_number_is_said_once_a_variant_and_fails_nothing() -> None:
    """A variant failed for it, the run's later lenses lost that variant: an A/A of sorted(d)
    through -m instructions,memory,track,rss said 'variant b failed' and measured no rss."""

    def text(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"ok": True, "value": None, "type": "list", "unit": None}

    worker = ScriptedWorker(lambda spec: 1000.0, handlers={"track_value": text})
    sink, _ = _run(Benchmark("t", stmt="[1]"), FakeRunner().on_spawn("statement_worker", worker))
    assert not sink.samples
    said = [n for n in sink.notes if "not a number" in n.message]
    assert sorted(n.variant or "" for n in said) == ["A", "B"]
    assert all(n.severity is Severity.WARNING and "a list" in n.message for n in said)


def test_a_command_it_would_measure_is_refused_before_anything_runs() -> None:
    measured = _experiment(Benchmark("c", cmd="true"))
    with pytest.raises(ConfigError, match="'c' is a command"):
        TrackLens().preflight(measured, FakeRunner())
    timed_only = _experiment(Benchmark("c", cmd="true", measured_by=(Metric.TIME,)))
    assert TrackLens().preflight(timed_only, FakeRunner()) == []
