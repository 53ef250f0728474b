"""The rss lens's measuring loops (`RssLens`) against scripted processes, and what they compare."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from perflab.lenses.registry import available_metrics, descriptor_for, lens_for
from perflab.lenses.rss import RSS
from perflab.lenses.rss.measure import RssLens
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.plan.specs import parse_metrics
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.tool_output.peak_memory import MAXRSS_KB, NET_BLOCKS, PEAK_ALLOC_BYTES
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import FakeClock
from tests.support.scripted_worker import ScriptedWorker

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.lenses.rss.measure"

VARIANTS = (Variant("A"), Variant("B", env={"BIG": "1"}))


def _big(spec: LaunchSpec) -> bool:
    return (spec.env or {}).get("BIG") == "1"


def _rss_sample(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
    loops = int(request["loops"])
    return {
        "ok": True,
        "loops": loops,
        "maxrss_kb": 20_000 if _big(spec) else 10_000,
        "peak_alloc_bytes": 8000 if _big(spec) else 4000,
        "net_blocks": loops if _big(spec) else 0,  # B leaks one block per iteration
    }


def _run(
    benchmark: Benchmark, runner: FakeRunner, clock_ns: Callable[[], int] = time.monotonic_ns
) -> tuple[MemorySink, Experiment]:
    sink = MemorySink()
    experiment = Experiment(
        benchmarks=(benchmark,),
        variants=VARIANTS,
        settings=dataclasses.replace(FAST, metrics=(RSS,), min_generations=3),
    )
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=sink,
        progress=NullProgress(),
        cpu=None,
        default_python="/usr/bin/python3",
        clock_ns=clock_ns,
    )
    RssLens().measure(benchmark, context)
    return sink, experiment


def test_the_lens_is_registered_by_its_descriptor_alone() -> None:
    assert RSS in available_metrics() and parse_metrics("time,rss") == (Metric.TIME, RSS)
    assert isinstance(lens_for(RSS), RssLens)
    assert descriptor_for(RSS).worker.handlers == "perflab.worker.peak_memory_ops"


def test_the_lens_spends_its_share_by_the_runs_clock() -> None:
    # the run's fake clock, not the real one, times the samples and the share: each of its
    # readings is 10 ms after the last, so every sample's time is a whole number of steps
    worker = ScriptedWorker(lambda spec: 1000.0, handlers={"rss_sample": _rss_sample})
    clock = FakeClock()
    sink, _ = _run(
        Benchmark("alloc", stmt="x = [0] * n"),
        FakeRunner().on_spawn("statement_worker", worker),
        clock,
    )

    assert clock.now_ns > 0 and sink.samples
    assert all(0 < s.at_ns <= clock.now_ns and s.at_ns % 10_000_000 == 0 for s in sink.samples)


def test_statements_compare_peak_rss_and_allocation_and_count_leaked_blocks() -> None:
    worker = ScriptedWorker(lambda spec: 1000.0, handlers={"rss_sample": _rss_sample})
    runner = FakeRunner().on_spawn("statement_worker", worker)
    benchmark = Benchmark("alloc", stmt="x = [0] * n")
    sink, experiment = _run(benchmark, runner)

    assert worker.started == 2 * 3  # fresh workers per generation
    registered = [r for _, r in worker.requests if r["op"] == "register"]
    assert len(registered) == 6 and "rss_sample" in registered[0]["source"]
    assert {s.name for s in sink.samples} == {MAXRSS_KB, PEAK_ALLOC_BYTES, NET_BLOCKS}
    assert {s.warmup for s in sink.samples} == {True, False}

    analysis = RssLens().analyse(benchmark, ["A", "B"], sink.data_for("alloc", RSS), experiment)
    by_event = {c.event: c for c in analysis.comparisons}
    assert set(by_event) == {MAXRSS_KB, PEAK_ALLOC_BYTES}
    assert by_event[MAXRSS_KB].ratio == pytest.approx(2.0)
    assert by_event[MAXRSS_KB].verdict is Verdict.SLOWER  # more memory
    assert by_event[MAXRSS_KB].unit == "kB"
    assert by_event[PEAK_ALLOC_BYTES].baseline_value == 4000
    leaked = by_event[MAXRSS_KB].to_json()["net_blocks_per_iteration"]
    assert leaked == {"baseline": 0.0, "variant": 1.0}


def _launcher(spec: LaunchSpec) -> FakeProcess:
    def replies(line: str) -> Iterator[str]:
        request = json.loads(line)
        if request["op"] == "run":
            big = request["env"].get("BIG") == "1"
            maxrss = 12_000 if request["argv"] == ["true"] else 30_000 if big else 10_000
            yield json.dumps(
                {
                    "ok": True, "wall_ns": 1_000_000, "returncode": 0, "timed_out": False,
                    "user_ns": 0, "sys_ns": 0, "maxrss_kb": maxrss,
                    "cpu": None, "stderr_tail": "",
                }
            )  # fmt: skip

    return FakeProcess(spec, replies, exit_on=lambda line: 0 if "quit" in line else None)


def test_commands_compare_the_peak_rss_wait4_reports() -> None:
    runner = FakeRunner().on_spawn("command_launcher", _launcher)
    benchmark = Benchmark("cmd", cmd="./prog")
    sink, experiment = _run(benchmark, runner)
    runs = [json.loads(line) for line in runner.spawned[0].written if '"run"' in line]
    assert [r["argv"] for r in runs[:2]] == [["true"], ["true"]]  # the floor, per variant
    assert len(runs) == 2 + 2 * (1 + 3)  # a warm-up block, then three
    analysis = RssLens().analyse(benchmark, ["A", "B"], sink.data_for("cmd", RSS), experiment)
    (comparison,) = analysis.comparisons
    assert (comparison.event, comparison.ratio) == (MAXRSS_KB, pytest.approx(3.0))
    assert comparison.ci_low == pytest.approx(3.0)  # every block the same: a deterministic CI
    # the baseline's 10 MB is below the 12 MB that `true` reads: it cannot be told apart
    (note,) = analysis.notes
    assert "not above what `true` reads" in note.message and "12,000 kB" in note.message
