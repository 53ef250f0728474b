"""Every variant recorded for the run's recordings (measure/perf/runs.py), perf played by
tests/support/scripted_perf: one recording read as each reading asks, the recipe's probe, and
the progress of a recording. The blocks and what the profile lens stores of them are in
tests/unit/lenses/profile/test_measure.py."""

from __future__ import annotations

import dataclasses
import os

from perflab.budget.perf_costs import Reading
from perflab.measure.perf.runs import record_variants, recorded_share, shared_recipe
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark
from perflab.tool_drivers.perf import CallGraph
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context, loop_ns
from tests.support.scripted_perf import ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

SETTINGS = dataclasses.replace(FAST, metrics=(Metric.PROFILE, Metric.ASM), warmup_blocks=1)
BOTH = (Reading.CALL_GRAPHS, Reading.LEAVES)
# two lenses sharing the recording, in the order listed, each with its reading (what
# registry.recording_readers gives); measure/ names no lens, so any two metrics will do
READERS = {Metric("first"): Reading.CALL_GRAPHS, Metric("second"): Reading.LEAVES}


def _perf() -> ScriptedPerf:
    return ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()))


def test_the_recipe_takes_the_call_graph_perf_accepts() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns), refused_call_graphs=frozenset({"dwarf"}))
    recipe = shared_recipe(perf.runner(), READERS)
    assert recipe.options.call_graph is CallGraph.FP
    assert recipe.readings == frozenset(BOTH) and recipe.processes == 2


def test_every_reader_asks_for_one_recipe_on_the_first_reader_s_schedule() -> None:
    runner = ScriptedPerf(ScriptedWorker(loop_ns)).runner()
    recipe = shared_recipe(runner, READERS)
    assert recipe.readings == frozenset(BOTH) and recipe.schedule == "first"
    # whichever lens asks, it passes the same readers: the same recipe, so one recording
    assert shared_recipe(runner, dict(READERS)) == recipe
    alone = shared_recipe(runner, {Metric("first"): Reading.CALL_GRAPHS})
    assert alone.readings == {Reading.CALL_GRAPHS} and alone.schedule == "first"


def test_a_statement_s_recording_is_read_once_per_reading() -> None:
    perf = _perf()
    context, _ = lens_context(perf.runner(), SETTINGS)
    recipe = dataclasses.replace(shared_recipe(context.runner, READERS), region_s=0.02)
    recorded = record_variants(BENCH, context, recipe, Metric.PROFILE)
    perf.control.join()
    assert set(recorded) == set(BOTH)
    # 2 variants x 2 processes, each recording read twice: with stacks, and its leaves alone
    assert len(perf.recorded) == 4 and len(perf.read) == 8
    leaves = [s for s in perf.read if "--hide-call-graph" in s.argv]
    assert len(leaves) == 4 and all("--no-demangle" in s.argv for s in leaves)
    for reading in BOTH:
        assert [len(v.parts) for v in recorded[reading]] == [2, 2]
    # one wall-time sample series per variant, shared by both readings
    assert recorded[Reading.LEAVES][0].wall_samples == recorded[Reading.CALL_GRAPHS][0].wall_samples


def test_a_command_s_runs_are_read_once_per_reading_and_pooled() -> None:
    perf = _perf()
    context, _ = lens_context(perf.runner(), SETTINGS)
    recipe = dataclasses.replace(shared_recipe(context.runner, READERS), max_command_runs=2)
    command = Benchmark(name="c", cmd="./prog")
    recorded = record_variants(command, context, recipe, Metric.PROFILE)
    assert len(perf.recorded) == 4 and len(perf.read) == 8
    (profile,) = recorded[Reading.CALL_GRAPHS][0].parts
    assert profile.loops == 2 and profile.region_ns == 2 * perf.command_wall_ns


def test_the_progress_of_a_recording_is_its_share_done() -> None:
    assert recorded_share(0.5, 2.0) == 0.25
    assert recorded_share(3.0, 2.0) == 1.0
    assert recorded_share(0.0, 0.0) == 1.0  # no region: done at once
