"""The time lens records the run it shares its measuring CPU with, and its analysis counts that
run as overload."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from perflab.lenses.time.artifacts import KIND_SHARED_CPU
from perflab.lenses.time.measure import TimeLens
from perflab.machine import cpu_lock
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import (
    Benchmark,
    Experiment,
    Variant,
)
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.lenses.time.measure"


def _measure_on_cpu_1() -> tuple[TimeLens, MemorySink, Benchmark, Experiment]:
    worker = ScriptedWorker(lambda spec: 800.0 if (spec.env or {}).get("FAST") else 1000.0)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    bench = Benchmark(name="b", stmt="f()")
    experiment = Experiment(
        benchmarks=(bench,),
        variants=(Variant("A"), Variant("B", env={"FAST": "1"})),
        settings=dataclasses.replace(FAST, budget_s=0.3),
    )
    sink = MemorySink()
    context = LensContext(
        experiment, runner, sink, NullProgress(), 1, "/usr/bin/python3", clock_ns=_Clock()
    )
    lens = TimeLens()
    lens.measure(bench, context)
    return lens, sink, bench, experiment


def _counted_as_overload(other_pid: int) -> None:
    lens, sink, bench, experiment = _measure_on_cpu_1()
    (recorded,) = [a for a in sink.artifacts if a.kind == KIND_SHARED_CPU]
    assert json.loads(recorded.content) == {"cpu": 1, "pids": [other_pid]}
    analysis = lens.analyse(bench, ["A", "B"], sink.data_for("b", Metric.TIME), experiment)
    assert [n for n in analysis.notes if f"pid {other_pid}" in n.message]
    (comparison,) = analysis.comparisons
    assert comparison.to_json()["overload"]["shared_cpu_with"] == [other_pid]


def test_the_time_lens_records_the_run_that_holds_its_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that shares its measuring CPU with the run holding it (after waiting for a free
    one) records the holder; the analysis names it and counts it as overload."""
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    held = cpu_lock.try_lock(1)
    assert held is not None and held.fd is not None
    other_pid = 4242  # the lock file says who holds it: another run
    os.pwrite(held.fd, f"{other_pid:<{cpu_lock.PID_WIDTH}}\n".encode(), 0)
    try:
        _counted_as_overload(other_pid)
    finally:
        held.close()


def test_the_time_lens_records_a_run_that_joined_its_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run holding the CPU records a run that joined it, and leaves the join's mark for
    the note the run gives at its end."""
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    held = cpu_lock.try_lock(1)
    assert held is not None
    other_pid = os.getppid()  # a live process: a run still measuring on the CPU
    mark = tmp_path / f"cpu1.joined.{other_pid}"
    mark.touch()
    try:
        _counted_as_overload(other_pid)
    finally:
        held.close()
    assert mark.exists()


class _Clock:
    """Each reading advances 10 ms."""

    def __init__(self) -> None:
        self.now_ns = 0

    def __call__(self) -> int:
        self.now_ns += 10_000_000
        return self.now_ns
