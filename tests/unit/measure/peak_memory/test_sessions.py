"""Peak-memory sessions (measure/peak_memory/sessions.py) against scripted processes: how many
loops a sample runs, what each reading stores and under which metric, and what a worker's bad
reading or a failing command becomes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.measure.peak_memory.sessions import MAX_LOOPS, measure_peak_memory, rss_sample
from perflab.measure.worker_client import StatementWorker, WorkerLaunch
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.tool_output.peak_memory import FLOOR_KB, MAXRSS_KB, NET_BLOCKS, PEAK_ALLOC_BYTES
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker

FILED_UNDER = Metric("memory")  # the measuring lens's metric, whichever lens it is
VARIANTS = (Variant("A"), Variant("B", env={"SLOW": "1"}))
STATEMENT = Benchmark("alloc", stmt="x = [0] * n")


def _reading(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
    loops = int(request["loops"])
    return {"ok": True, "loops": loops, "maxrss_kb": 10_000, "peak_alloc_bytes": 4000,
            "net_blocks": 3 * loops}  # fmt: skip


def _measure(benchmark: Benchmark, runner: FakeRunner) -> MemorySink:
    sink = MemorySink()
    settings = dataclasses.replace(FAST, min_generations=2, sample_target_ms=1.0)
    context = LensContext(
        experiment=Experiment(benchmarks=(benchmark,), variants=VARIANTS, settings=settings),
        runner=runner,
        sink=sink,
        progress=NullProgress(),
        cpu=None,
        default_python="/usr/bin/python3",
    )
    measure_peak_memory(benchmark, context, metric=FILED_UNDER)
    return sink


def test_every_variant_runs_the_slowest_variants_loop_count() -> None:
    # A: 1 µs an iteration, B: 100 µs; a 1 ms sample is 1000 loops of A, 10 of B
    worker = ScriptedWorker(
        lambda spec: 100_000.0 if spec.env.get("SLOW") else 1000.0,
        handlers={"rss_sample": _reading},
    )
    sink = _measure(STATEMENT, FakeRunner().on_spawn("statement_worker", worker))
    asked = {int(r["loops"]) for _, r in worker.requests if r["op"] == "rss_sample"}
    assert asked == {10}
    assert {s.metric for s in sink.samples} == {FILED_UNDER}
    blocks = [s for s in sink.samples if s.name == NET_BLOCKS]
    assert {s.loops for s in blocks} == {10}  # net blocks are per iteration: value / loops
    peaks = [s for s in sink.samples if s.name in (MAXRSS_KB, PEAK_ALLOC_BYTES)]
    assert {s.loops for s in peaks} == {1}  # a peak is the sample's, not per iteration
    # two generations of two blocks, the first block of each a warm-up
    assert {(s.generation, s.block, s.warmup) for s in blocks} == {
        (0, 0, True), (0, 1, False), (1, 0, True), (1, 1, False),
    }  # fmt: skip


def test_a_fast_statement_runs_at_most_the_loop_cap() -> None:
    worker = ScriptedWorker(lambda spec: 1.0, handlers={"rss_sample": _reading})
    _measure(STATEMENT, FakeRunner().on_spawn("statement_worker", worker))
    asked = {int(r["loops"]) for _, r in worker.requests if r["op"] == "rss_sample"}
    assert asked == {MAX_LOOPS}


def test_a_worker_without_a_peak_rss_stores_none() -> None:
    def no_rss(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return {**_reading(spec, request), "maxrss_kb": None}

    worker = ScriptedWorker(lambda spec: 1000.0, handlers={"rss_sample": no_rss})
    sink = _measure(STATEMENT, FakeRunner().on_spawn("statement_worker", worker))
    assert {s.name for s in sink.samples} == {PEAK_ALLOC_BYTES, NET_BLOCKS}


def _worker(reply: Mapping[str, Any]) -> StatementWorker:
    scripted = ScriptedWorker(lambda spec: 1000.0, handlers={"rss_sample": lambda s, r: reply})
    runner = FakeRunner().on_spawn("statement_worker", scripted)
    return StatementWorker.start(runner, STATEMENT, VARIANTS[0], WorkerLaunch("python3", None, 5))


def test_a_reading_is_parsed_and_a_bad_one_is_the_workers_error() -> None:
    with _worker({"ok": True, "loops": 5, "maxrss_kb": 7.0, "peak_alloc_bytes": 9,
                  "net_blocks": 2}) as worker:  # fmt: skip
        reading = rss_sample(worker, 5)
    assert (reading.loops, reading.maxrss_kb, reading.peak_alloc_bytes) == (5, 7, 9)
    with _worker({"ok": True, "loops": 5}) as worker:
        with pytest.raises(BenchmarkFailedError, match="memory reading could not be read") as e:
            rss_sample(worker, 5)
    assert e.value.detail == "{'ok': True, 'loops': 5}"
    failed = {"ok": False, "phase": "stmt", "error": "MemoryError"}
    with _worker(failed) as worker:
        with pytest.raises(BenchmarkFailedError, match="the statement raised"):
            rss_sample(worker, 5)


def _launcher(returncode: int) -> Any:
    def spawn(spec: LaunchSpec) -> FakeProcess:
        def replies(line: str) -> Iterator[str]:
            request = json.loads(line)
            if request["op"] == "run":
                floor = request["argv"] == ["true"]
                yield json.dumps({"ok": True, "wall_ns": 1, "returncode": 0 if floor else
                                  returncode, "timed_out": False, "user_ns": 0, "sys_ns": 0,
                                  "maxrss_kb": 2000 if floor else 9000, "cpu": None,
                                  "stderr_tail": "out of memory\n"})  # fmt: skip

        return FakeProcess(spec, replies, exit_on=lambda line: 0 if "quit" in line else None)

    return spawn


def test_a_command_stores_each_runs_peak_and_each_variants_floor() -> None:
    runner = FakeRunner().on_spawn("command_launcher", _launcher(0))
    sink = _measure(Benchmark("cmd", cmd="./prog"), runner)
    floors = [s for s in sink.samples if s.name == FLOOR_KB]
    assert [(s.variant, s.value) for s in floors] == [("A", 2000.0), ("B", 2000.0)]
    peaks = [s for s in sink.samples if s.name == MAXRSS_KB]
    # each run its own process: its block is a group of its own
    assert {s.block for s in peaks} == {0} and len({s.generation for s in peaks}) > 1


def test_a_failing_command_fails_the_benchmark_with_its_stderr() -> None:
    runner = FakeRunner().on_spawn("command_launcher", _launcher(137))
    with pytest.raises(BenchmarkFailedError, match="exited with status 137") as failed:
        _measure(Benchmark("cmd", cmd="./prog"), runner)
    assert failed.value.detail == "out of memory" and failed.value.variant in ("A", "B")
