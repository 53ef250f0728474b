"""The counters lens on commands: every run of the command under perf stat (played by
tests/support/scripted_perf) is one sample of one iteration, alternated between the variants."""

from __future__ import annotations

import dataclasses

from perflab.lenses.counters.commands import CountersCommandSession
from perflab.lenses.counters.metric import COUNTERS
from perflab.records.model import Benchmark
from tests.support.clocks import FakeClock
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import lens_context, loop_ns
from tests.support.scripted_perf import PERF, ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.lenses.counters.commands"

SETTINGS = dataclasses.replace(
    FAST, metrics=(COUNTERS,), min_generations=2, warmup_blocks=1
).with_options(events=("instructions",))
COMMAND = Benchmark(name="c", cmd="./prog")


def test_a_command_is_counted_whole_once_per_block_and_variant() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns))
    context, sink = lens_context(perf.runner(), SETTINGS, FakeClock())
    context = dataclasses.replace(
        context, experiment=dataclasses.replace(context.experiment, benchmarks=(COMMAND,))
    )
    CountersCommandSession(
        COMMAND, context, events=("instructions",), perf=PERF, max_generations=30
    ).run()
    assert perf.counted and all(spec.argv[-1] == "./prog" for spec in perf.counted)
    samples = [s for s in sink.samples if s.name == "instructions"]
    assert len(samples) == len(perf.counted) and all(s.loops == 1 for s in samples)
    assert {s.variant for s in samples} == {"A", "B"}
