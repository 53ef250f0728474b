"""The counters lens on statements: generations of workers under perf stat (played by
tests/support/scripted_perf), counting switched on around each measured block only, one
sample per variant and generation, and an AVX-512 tally per worker with its control sample."""

from __future__ import annotations

import dataclasses
import json

from perflab.lenses.counters.avx512 import AVX512
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.statements import CountersStatementSession
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import MemorySink
from tests.support.clocks import FakeClock
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context, loop_ns
from tests.support.scripted_perf import PERF, ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.lenses.counters.statements"

SETTINGS = dataclasses.replace(
    FAST, metrics=(COUNTERS,), min_generations=2, warmup_blocks=1
).with_options(events=("instructions",))
NEVER_AVX512 = "AVX512_elapsed_ms:\t-1\n"


def _per_loop(spec: LaunchSpec, event: str) -> float:
    """Variant B (FAST=1) runs 0.8 times A's instructions."""
    return 800.0 if (spec.env or {}).get("FAST") == "1" else 1000.0


def _counted() -> tuple[ScriptedPerf, MemorySink]:
    perf = ScriptedPerf(ScriptedWorker(loop_ns), stat_per_loop=_per_loop)
    context, sink = lens_context(perf.runner(), SETTINGS, FakeClock())
    CountersStatementSession(
        BENCH,
        context,
        events=("instructions",),
        perf=PERF,
        blocks_per_generation=3,
        max_generations=30,
        arch_status=lambda pid: NEVER_AVX512,
    ).run()
    perf.control.join()
    return perf, sink


def test_each_generation_counts_every_variant_under_perf_stat_around_its_timed_loops() -> None:
    perf, sink = _counted()
    # two generations of one worker per variant, each under its own perf stat
    assert len(perf.counted) == 2 * 2
    # counting switched on and off around every measured block, never around a warm-up
    assert perf.control.commands.count("enable") == 2 * 2 * 3
    assert perf.control.commands.count("disable") == perf.control.commands.count("enable")
    # one sample per variant and generation: the generation's total over its counted loops
    samples = [s for s in sink.samples if s.name == "instructions"]
    assert {(s.variant, s.generation) for s in samples} == {(v, g) for v in "AB" for g in (0, 1)}
    assert all(s.metric is COUNTERS and s.value / s.loops in (800.0, 1000.0) for s in samples)


def test_every_generation_keeps_its_avx512_tally_with_a_control_sample_per_worker() -> None:
    _, sink = _counted()
    tallies = [json.loads(a.content) for a in sink.artifacts if a.kind == AVX512]
    assert len(tallies) == 2 * 2
    assert all(t["samples"] == 3 and t["control_samples"] == 1 for t in tallies)
    assert all(t["with_avx512"] == 0 and t["control_with_avx512"] == 0 for t in tallies)
