"""The rss lens's measuring loops against scripted processes, and its analysis."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
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
from tests.conftest import FAST
from tests.scripted_worker import ScriptedWorker

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.lenses.rss"

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


def _run(benchmark: Benchmark, runner: FakeRunner) -> tuple[MemorySink, Experiment]:
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
    )
    RssLens().measure(benchmark, context)
    return sink, experiment


def test_the_lens_is_registered_by_its_descriptor_alone() -> None:
    assert RSS in available_metrics() and parse_metrics("time,rss") == (Metric.TIME, RSS)
    assert isinstance(lens_for(RSS), RssLens)
    assert descriptor_for(RSS).worker.handlers == "perflab.worker.peak_memory_ops"


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


def test_tracemalloc_s_peak_is_not_the_change_when_peak_rss_moved_far_more() -> None:
    from perflab.records.model import Comparison
    from perflab.tool_output.peak_memory import tracemalloc_blind

    def compared(event: str, before: float, after: float, verdict: Verdict) -> Comparison:
        return Comparison(
            benchmark="b",
            metric=RSS,
            baseline="out",
            variant="copy",
            ratio=after / before,
            ci_low=1.0,
            ci_high=1.0,
            verdict=verdict,
            baseline_value=before,
            variant_value=after,
            unit="B",
            event=event,
        )

    # torch tensors of 16 and 32 MB: Python's allocator saw a few hundred bytes of objects
    peak = compared(PEAK_ALLOC_BYTES, 276.0, 296.0, Verdict.SLOWER)
    rss = compared(MAXRSS_KB, 300_998.0, 375_382.0, Verdict.SLOWER)
    blind = tracemalloc_blind(peak, rss)
    assert blind is not None and "not the memory change" in blind and "375,382 kB" in blind
    # peak RSS not told apart (an A/A), or moved about as much as Python allocated: no note
    assert (
        tracemalloc_blind(peak, compared(MAXRSS_KB, 300_998, 301_000, Verdict.EQUIVALENT)) is None
    )
    listed = compared(PEAK_ALLOC_BYTES, 8_000.0, 800_000.0, Verdict.SLOWER)
    assert tracemalloc_blind(listed, compared(MAXRSS_KB, 10_000, 10_800, Verdict.SLOWER)) is None


def test_a_peak_allocated_that_is_not_the_change_is_shown_without_a_verdict() -> None:
    from perflab.records.model import BenchmarkData, Sample, Settings
    from perflab.tool_output.peak_memory import analyse_peak_memory

    # torch tensors of 16 and 32 MB: peak RSS moved 380 MB, tracemalloc saw 264 B and 344 B
    samples = tuple(
        Sample(
            benchmark="t",
            variant=variant,
            metric=RSS,
            name=name,
            value=value,
            loops=1,
            generation=generation,
            block=generation,
        )
        for generation in range(3)
        for variant, rss_kb, peak in (("A", 20_000.0, 264.0), ("B", 400_000.0, 344.0))
        for name, value in ((MAXRSS_KB, rss_kb), (PEAK_ALLOC_BYTES, peak))
    )
    result = analyse_peak_memory(
        Benchmark("t", stmt="x"), ["A", "B"], BenchmarkData(samples, ()), Settings(), metric=RSS
    )
    by_event = {c.event: c for c in result.comparisons}
    assert by_event[MAXRSS_KB].verdict is Verdict.SLOWER and by_event[MAXRSS_KB].withheld is None
    peak = by_event[PEAK_ALLOC_BYTES].to_json()
    assert (peak["verdict"], peak["interval_verdict"]) == ("inconclusive", "slower")
    assert peak["withheld_reason"] == "tracemalloc-blind" and "B" in result.blind_notes
