"""The reference runs that time the machine (and valgrind), and the CPU they run on."""

from __future__ import annotations

import pytest

from perflab.budget.machine_speed import MachineSpeed
from perflab.engine.prepare.probe import measure_speed, reference_cpu
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed


def test_the_reference_runs_time_the_machine_and_valgrind_only_when_asked() -> None:
    runner = FakeRunner()
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
    runner = FakeRunner()
    runner.on_run(r"-I -S -c import time", returncode=1, stderr="no")
    runner.on_run(r"^valgrind", returncode=1, stderr="valgrind: cannot start")
    speed = measure_speed(runner, valgrind=True, cpu=None)
    assert not speed.measured and speed.factor == 1.0 and speed.valgrind_factor == 1.0


@pytest.mark.usefixtures("private_cpu_locks")  # another worker's runs hold CPUs too
def test_the_reference_runs_beside_the_probe_on_another_cpu() -> None:
    assert reference_cpu(0, {0, 1}) == 1
    assert reference_cpu(None, {0, 1}) is None  # unpinned, beside
    # after, on the same
    assert reference_cpu(0, {0}) is False and reference_cpu(None, {0}) is False
