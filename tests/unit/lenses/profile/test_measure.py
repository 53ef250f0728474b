"""The profile lens's loop (lenses/profile/measure.py over measure/perf/runs.py), perf played by
tests/support/scripted_perf: what is stored per variant and worker process, which loops are
recorded, and what a refused call graph or an empty recording becomes."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import pytest

from perflab.lenses.profile.analyse import FOLDED, PROFILE_META
from perflab.lenses.profile.measure import ProfileLens
from perflab.measure.perf.runs import WALL_NS
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Severity
from perflab.tool_drivers.perf import CallGraph, RecordOptions
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context, loop_ns
from tests.support.scripted_perf import PERF, ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

SETTINGS = dataclasses.replace(FAST, metrics=(Metric.PROFILE,), warmup_blocks=1)
REGION_S = 0.04  # of each variant's timed loops recorded, over its two worker processes


@pytest.fixture(autouse=True)
def perf_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("perflab.tool_drivers.perf.which", lambda tool: PERF)


def _perf(**fields: Any) -> ScriptedPerf:
    return ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()), **fields)


def test_each_variant_is_recorded_in_two_processes_and_stored_per_process() -> None:
    perf = _perf()
    context, sink = lens_context(perf.runner(), SETTINGS)
    ProfileLens(region_s=REGION_S).measure(BENCH, context)
    perf.control.join()
    # two worker processes per variant, each under its own perf record, each read back once
    assert len(perf.recorded) == 4 and len(perf.read) == 4
    stored = {(a.variant, a.kind, a.generation) for a in sink.artifacts}
    assert stored == {(v, k, g) for v in "AB" for k in (FOLDED, PROFILE_META) for g in (0, 1)}
    meta = json.loads(next(a.content for a in sink.artifacts if a.kind == PROFILE_META))
    assert meta["call_graph"] == "dwarf" and meta["sampled_events"] == ["cpu-clock"]
    # the wall time of every block, warm-up included, is the lens's sample
    walls = [s for s in sink.samples if s.name == WALL_NS]
    assert walls and all(s.metric is Metric.PROFILE for s in walls)
    assert {s.variant for s in walls} == {"A", "B"}
    assert sink.notes == []


def test_warm_up_blocks_are_sampled_but_not_recorded() -> None:
    perf = _perf()
    context, sink = lens_context(perf.runner(), SETTINGS)
    ProfileLens(region_s=REGION_S).measure(BENCH, context)
    perf.control.join()
    walls = [s for s in sink.samples if s.name == WALL_NS]
    # one enable/disable pair per recorded block of each variant: every block but the warm-up
    # of each of the two processes
    recorded = perf.control.commands.count("enable")
    assert perf.control.commands.count("disable") == recorded
    assert recorded == len(walls) - 2 * 2 * SETTINGS.warmup_blocks


def test_a_call_graph_perf_refuses_is_replaced_and_said_before_measuring() -> None:
    perf = _perf(refused_call_graphs=frozenset({"dwarf"}), events="cycles\n")
    context, _ = lens_context(perf.runner(), SETTINGS)
    lens = ProfileLens(region_s=REGION_S)
    (note,) = lens.preflight(context.experiment, context.runner)
    assert note.severity is Severity.WARNING
    assert note.message == "perf cannot record dwarf call graphs here; using fp"
    assert lens.recipe(BENCH, context).options.call_graph is CallGraph.FP


def test_a_fallback_to_a_software_event_is_said_before_measuring() -> None:
    perf = _perf()
    context, _ = lens_context(perf.runner(), SETTINGS)
    lens = ProfileLens(options=RecordOptions(event="cycles"))
    notes = lens.preflight(context.experiment, context.runner)
    assert any("cpu-clock" in n.message for n in notes), notes


def test_a_worker_process_that_recorded_nothing_is_named_in_a_warning() -> None:
    perf = _perf(script_text="")
    context, sink = lens_context(perf.runner(), SETTINGS)
    ProfileLens(region_s=REGION_S).measure(BENCH, context)
    perf.control.join()
    messages = {(n.variant, n.message) for n in sink.notes}
    assert messages == {
        (v, f"perf recorded no samples inside the measured region of worker process {g} of 2")
        for v in "AB"
        for g in (1, 2)
    }


def test_a_command_records_one_run_per_block_until_the_region_is_long_enough() -> None:
    perf = _perf(command_wall_ns=15_000_000)
    context, sink = lens_context(perf.runner(), SETTINGS)
    command = Benchmark(name="c", cmd="./prog")
    context = dataclasses.replace(
        context, experiment=dataclasses.replace(context.experiment, benchmarks=(command,))
    )
    ProfileLens(region_s=REGION_S).measure(command, context)
    # 15 ms a run: three runs per variant reach 40 ms; no warm-up (each run starts afresh)
    assert len(perf.recorded) == 6 and all(s.argv[-1] == "./prog" for s in perf.recorded)
    assert {(a.variant, a.generation) for a in sink.artifacts if a.kind == FOLDED} == {
        ("A", 0),
        ("B", 0),
    }
    assert len([s for s in sink.samples if s.name == WALL_NS]) == 6


def test_a_command_s_runs_stop_at_the_most_the_lens_allows() -> None:
    perf = _perf(command_wall_ns=1_000_000)
    context, _ = lens_context(perf.runner(), SETTINGS)
    command = Benchmark(name="c", cmd="./prog")
    ProfileLens(region_s=REGION_S, max_command_runs=3).measure(command, context)
    assert len(perf.recorded) == 2 * 3
