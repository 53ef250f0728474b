"""The reference runs that time the machine (and valgrind), the CPU they run on, and the work
started on that CPU once they are done."""

from __future__ import annotations

import pytest

from perflab.budget.machine_speed import MachineSpeed
from perflab.engine.prepare.probe import ProbeHost, measure_speed, probe_benchmark, reference_cpu
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker


def test_the_reference_runs_time_the_machine_and_valgrind_only_when_asked() -> None:
    runner = FakeRunner(tools=("valgrind",))
    runner.on_run(
        r"-I -S -c import time",
        Completed((), 0, "0.125\n", "", wall_ns=int(0.52e9)),
    )
    runner.on_run(r"^valgrind --tool=callgrind", Completed((), 0, "", "", wall_ns=int(1.9e9)))
    speed = measure_speed(runner, valgrind=False, cpu=1)
    assert speed == MachineSpeed(reference_s=0.52, reference_cpu_s=0.125)
    assert [spec.cpu for spec, _ in runner.calls] == [1, 1, 1]  # the median of three
    speed = measure_speed(runner, valgrind=True, cpu=1)
    assert speed.valgrind_s == pytest.approx(1.9)
    assert speed.valgrind_factor == pytest.approx(2.0)


def test_a_failed_reference_run_is_not_measured() -> None:
    runner = FakeRunner(tools=("valgrind",))
    runner.on_run(r"-I -S -c import time", returncode=1, stderr="no")
    runner.on_run(r"^valgrind", returncode=1, stderr="valgrind: cannot start")
    speed = measure_speed(runner, valgrind=True, cpu=None)
    assert not speed.measured and speed.factor == 1.0 and speed.valgrind_factor == 1.0


def test_valgrind_is_not_timed_where_the_runner_finds_none() -> None:
    runner = FakeRunner()  # no tools installed
    runner.on_run(r"-I -S -c import time", Completed((), 0, "0.125\n", "", wall_ns=int(0.52e9)))
    speed = measure_speed(runner, valgrind=True, cpu=None)
    assert speed.valgrind_s is None
    assert all(spec.argv[0] != "valgrind" for spec, _ in runner.calls)


@pytest.mark.usefixtures("private_cpu_locks")  # another worker's runs hold CPUs too
def test_the_reference_runs_beside_the_probe_on_another_cpu() -> None:
    assert reference_cpu(0, {0, 1}) == 1
    assert reference_cpu(None, {0, 1}) is None  # unpinned, beside
    # after, on the same
    assert reference_cpu(0, {0}) is False and reference_cpu(None, {0}) is False


def _probed_with_beside(
    allowed: list[int], speed: MachineSpeed | None
) -> tuple[list[tuple[int | None, int]], FakeRunner]:
    """A statement probed on CPU 0 (its fork server fails: the probe falls back) with work
    beside it: the CPU each start was given and how many reference runs had run by then."""
    runner = FakeRunner()
    runner.on_run(r"-I -S -c import time", Completed((), 0, "0.125\n", "", wall_ns=int(0.5e9)))
    runner.on_spawn("statement_worker", ScriptedWorker(lambda spec: 1000.0))
    started: list[tuple[int | None, int]] = []
    experiment = Experiment(
        (Benchmark("b", stmt="f()", setup="pass"),), (Variant("A"), Variant("B")), FAST
    )
    probe_benchmark(
        experiment.benchmarks[0],
        experiment,
        ProbeHost(runner, "/usr/bin/python3", cpu=0, allowed_cpus=lambda: allowed),
        speed=speed,
        beside=lambda cpu: started.append((cpu, len(runner.calls))),
    )
    return started, runner


@pytest.mark.usefixtures("private_cpu_locks")
def test_work_beside_the_probe_starts_on_the_reference_cpu_once_the_speed_is_measured() -> None:
    started, runner = _probed_with_beside([0, 1], None)
    assert started == [(1, 3)]  # after the three reference runs, on their CPU
    assert [spec.cpu for spec, _ in runner.calls] == [1, 1, 1]
    # a speed measured earlier in the run: nothing runs there first
    started, _ = _probed_with_beside([0, 1], MachineSpeed(reference_s=0.5))
    assert started == [(1, 0)]
    # no CPU beside the probe: the work is not started (the benchmark does it itself)
    started, _ = _probed_with_beside([0], None)
    assert started == []


@pytest.mark.usefixtures("private_cpu_locks")
def test_the_probe_says_whether_perflab_may_run_on_a_cpu_beside_the_measuring_one() -> None:
    experiment = Experiment(
        (Benchmark("b", stmt="f()", setup="pass"),), (Variant("A"), Variant("B")), FAST
    )
    for allowed, beside in (([0, 1], True), ([0], False)):
        runner = FakeRunner()
        runner.on_spawn("statement_worker", ScriptedWorker(lambda spec: 1000.0))
        probe = probe_benchmark(
            experiment.benchmarks[0],
            experiment,
            ProbeHost(runner, "/usr/bin/python3", cpu=0, allowed_cpus=allowed.copy),
            speed=MachineSpeed(reference_s=0.5),
        )
        assert probe.cpu_beside is beside
