"""The counters lens as the engine calls it: the probe's findings stored before measuring, and
a benchmark measured and compared, with perf stat played by tests/support/scripted_perf."""

from __future__ import annotations

import dataclasses
import json

import pytest

from perflab.lenses.counters.availability import PROBE, HostFacts
from perflab.lenses.counters.measure import CountersLens
from perflab.lenses.counters.metric import COUNTERS
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import MemorySink
from perflab.records.model import Benchmark, Experiment
from tests.support.clocks import FakeClock
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, VARIANTS, lens_context, loop_ns
from tests.support.scripted_perf import ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

VM = HostFacts(hypervisor=True, paranoid=2, root=True)
EVENTS = ("instructions", "cycles")
SETTINGS = dataclasses.replace(
    FAST, metrics=(COUNTERS,), min_generations=2, warmup_blocks=1
).with_options(events=EVENTS)
NEVER_AVX512 = "AVX512_elapsed_ms:\t-1\n"
SETTINGS_EXPERIMENT = Experiment(benchmarks=(BENCH,), variants=VARIANTS, settings=SETTINGS)


def _per_loop(spec: LaunchSpec, event: str) -> float | None:
    """Variant B (FAST=1) runs 0.8 times A's instructions; cycles are not supported here."""
    if event == "cycles":
        return None
    return 800.0 if (spec.env or {}).get("FAST") == "1" else 1000.0


def _measured(benchmark: Benchmark = BENCH) -> tuple[ScriptedPerf, MemorySink, CountersLens]:
    perf = ScriptedPerf(ScriptedWorker(loop_ns), stat_per_loop=_per_loop)
    context, sink = lens_context(perf.runner(), SETTINGS, FakeClock())
    context = dataclasses.replace(
        context, experiment=dataclasses.replace(context.experiment, benchmarks=(benchmark,))
    )
    lens = CountersLens(blocks_per_generation=3, arch_status=lambda pid: NEVER_AVX512, facts=VM)
    lens.measure(benchmark, context)
    perf.control.join()
    return perf, sink, lens


def test_a_statement_is_counted_in_workers_and_compared_by_its_counts() -> None:
    perf, sink, lens = _measured()
    assert len(perf.counted) == 2 * 2 and perf.control.commands
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", COUNTERS), SETTINGS_EXPERIMENT)
    (compared,) = [c for c in analysis.comparisons if c.event == "instructions"]
    assert compared.ratio == pytest.approx(0.8)


def test_an_event_perf_cannot_count_is_stored_as_such_and_never_as_a_sample() -> None:
    _, sink, _ = _measured()
    assert not [s for s in sink.samples if s.name == "cycles"]
    probed = json.loads(next(a.content for a in sink.artifacts if a.kind == PROBE))
    assert [u["event"] for u in probed["unavailable"]] == ["cycles"]


def test_a_command_is_counted_by_runs_of_the_command_under_perf_stat() -> None:
    perf, _, _ = _measured(Benchmark(name="c", cmd="./prog"))
    assert perf.counted and all(spec.argv[-1] == "./prog" for spec in perf.counted)
    assert not perf.control.commands
