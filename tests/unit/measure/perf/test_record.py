"""One variant recorded under `perf record` (measure/perf/record.py), perf played by
tests/support/scripted_perf: sampling is switched on around each recorded loop alone, a
statement records until its region is long enough, a command's runs are pooled, and a failure
becomes an error that names perf's part."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perflab.machine.proc import LaunchSpec
from perflab.measure.perf.record import (
    ProfiledWorker,
    RecordedRegion,
    record_command_profile,
    record_statement_profile,
)
from perflab.measure.worker_client import WorkerLaunch
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError
from perflab.records.model import Variant
from perflab.tool_drivers.perf import CallGraph, RecordOptions
from tests.support.lens_contexts import BENCH, loop_ns
from tests.support.scripted_perf import PERF, ScriptedPerf
from tests.support.scripted_worker import ScriptedWorker

LAUNCH = WorkerLaunch("/usr/bin/python3", cpu=1, timeout_s=5.0)
# 10 ms samples of 1 µs loops: 10,000 loops a sample; 50 ms of region: five samples
REGION = RecordedRegion(seconds=0.05, sample_ms=10.0)


def test_a_statement_is_sampled_only_inside_its_timed_loops_until_the_region_is_long_enough() -> (
    None
):
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()))
    profile = record_statement_profile(perf.runner(), BENCH, Variant("A"), LAUNCH, region=REGION)
    perf.control.join()
    assert perf.control.commands == ["enable", "disable"] * 5
    assert (profile.loops, profile.region_ns) == (50_000, 50_000_000)
    assert profile.samples and profile.sampled_events == ("cpu-clock",)
    # the worker ran under perf record, its samples read back by perf script
    (spawned,) = perf.recorded
    assert spawned.argv[:2] == (PERF, "record") and "--delay" in spawned.argv
    (script,) = perf.read
    assert script.argv[1] == "script"
    assert "--no-demangle" not in script.argv  # the options demangle (the asm lens' do not)


def test_a_statement_s_recording_may_keep_mangled_names_and_its_mapped_files() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()))
    profile = record_statement_profile(
        perf.runner(),
        BENCH,
        Variant("A"),
        LAUNCH,
        region=REGION,
        options=RecordOptions(demangle=False),
    )
    (script,) = perf.read
    assert "--no-demangle" in script.argv
    # the worker's own mappings (read from /proc while it lived) come first
    assert profile.objects and profile.objects[0].startswith("/")


def test_the_call_graph_perf_refuses_falls_back_before_recording() -> None:
    perf = ScriptedPerf(
        ScriptedWorker(loop_ns, reported_pid=os.getpid()), refused_call_graphs=frozenset({"dwarf"})
    )
    profile = record_statement_profile(perf.runner(), BENCH, Variant("A"), LAUNCH, region=REGION)
    assert profile.call_graph is CallGraph.FP
    (spawned,) = perf.recorded
    assert "fp" in spawned.argv


def test_a_statement_that_fails_while_recorded_kills_its_worker_and_closes_the_channel() -> None:
    worker = ScriptedWorker(
        loop_ns, reported_pid=os.getpid(), fail_setup="Traceback ...\nNameError: f"
    )
    perf = ScriptedPerf(worker)
    with pytest.raises(BenchmarkFailedError, match="NameError"):
        record_statement_profile(perf.runner(), BENCH, Variant("A"), LAUNCH, region=REGION)
    perf.control.join()  # the channel closed: the answering thread ended
    assert perf.control.commands == []


def test_a_profile_perf_script_cannot_read_is_a_tool_error() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()), script_status=1)
    with pytest.raises(ToolUnavailableError, match="perf script could not read the profile"):
        record_statement_profile(perf.runner(), BENCH, Variant("A"), LAUNCH, region=REGION)


def test_a_command_s_runs_are_recorded_one_by_one_and_pooled() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()))
    command = LaunchSpec(argv=("./prog",), cpu=1)
    profile = record_command_profile(perf.runner(), command, runs=3)
    assert len(perf.recorded) == 3 and len(perf.read) == 3
    assert all(spec.argv[-1] == "./prog" and spec.cpu == 1 for spec in perf.recorded)
    assert (profile.loops, profile.region_ns) == (3, 3 * perf.command_wall_ns)
    one = record_command_profile(
        ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid())).runner(), command
    )
    assert len(profile.samples) == 3 * len(one.samples)


def test_a_command_that_fails_under_perf_record_fails_the_benchmark() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()), command_status=2)
    with pytest.raises(BenchmarkFailedError, match="the command under perf record"):
        record_command_profile(perf.runner(), LaunchSpec(argv=("./prog",)))
    assert perf.read == []  # nothing read back from a run that failed


def test_a_profiled_worker_samples_warm_up_loops_without_recording_them() -> None:
    perf = ScriptedPerf(ScriptedWorker(loop_ns, reported_pid=os.getpid()))
    runner = perf.runner()
    worker = ProfiledWorker(runner, options=RecordOptions(), data_path=Path("/nonexistent"))
    worker.start(BENCH, Variant("A"), LAUNCH)
    worker.sample(100, record=False)
    worker.sample(200)
    worker.kill()
    perf.control.join()
    assert perf.control.commands == ["enable", "disable"]
    assert (worker.loops, worker.region_ns) == (200, 200_000)
