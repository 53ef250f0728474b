"""A command's run-queue wait counts as preemption only for the part other processes took:
perflab's launcher and the program's own threads and children share its CPU too."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.commands import CommandLauncher, waited_for_others_ns
from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.preemption import is_preempted

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.measure.commands"


def test_the_launcher_s_turns_come_off_the_wait() -> None:
    # a 12 ms program on an idle CPU: it waited 310 us, while the launcher ran 330 us
    assert (
        waited_for_others_ns(
            310_000, launcher_cpu_ns=330_000, program_cpu_ns=11_600_000, leader_cpu_ns=11_600_000
        )
        == 0
    )


def test_the_program_s_own_threads_and_children_are_the_program() -> None:
    # its first thread ran 6 ms of its 10 ms; it waited 4.1 ms while its other thread ran
    waited = waited_for_others_ns(
        4_100_000, launcher_cpu_ns=50_000, program_cpu_ns=10_000_000, leader_cpu_ns=6_000_000
    )
    assert waited == 50_000


def test_what_neither_ran_is_another_process_s_turn() -> None:
    # a 3 ms time slice of a busy loop on the same CPU stays, less the launcher's 100 us
    waited = waited_for_others_ns(
        3_400_000, launcher_cpu_ns=100_000, program_cpu_ns=12_000_000, leader_cpu_ns=12_000_000
    )
    assert waited == 3_300_000


def test_older_launchers_replies_keep_the_whole_wait() -> None:
    assert waited_for_others_ns(
        310_000, launcher_cpu_ns=None, program_cpu_ns=12_000_000, leader_cpu_ns=None
    ) == 310_000  # fmt: skip
    assert waited_for_others_ns(
        None, launcher_cpu_ns=1, program_cpu_ns=1, leader_cpu_ns=1
    ) is None  # fmt: skip


def _launcher(reply: dict[str, Any]) -> Any:
    def spawn(spec: LaunchSpec) -> FakeProcess:
        def replies(line: str) -> Iterator[str]:
            if json.loads(line)["op"] == "run":
                yield json.dumps(reply)

        return FakeProcess(spec, replies, exit_on=lambda line: 0 if "quit" in line else None)

    return spawn


def test_a_command_sample_on_an_idle_cpu_is_not_preempted() -> None:
    # the figures of a 12 ms C loop whose whole wait was the launcher's start-up
    reply = {
        "ok": True, "wall_ns": 12_400_000, "returncode": 0, "timed_out": False,
        "user_ns": 11_900_000, "sys_ns": 100_000, "maxrss_kb": 1500, "cpu": 1,
        "stderr_tail": "", "left": 0, "nivcsw": 3, "run_queue_ns": 310_000,
        "leader_cpu_ns": 12_000_000, "launcher_cpu_ns": 330_000,
    }  # fmt: skip
    runner = FakeRunner().on_spawn("command_launcher", _launcher(reply))
    with CommandLauncher(runner, cpu=1) as launcher:
        run = launcher.run(("./loop",), env={}, cwd=None, timeout_s=5)
    assert (run.queued_ns, run.launcher_cpu_ns, run.run_queue_ns) == (310_000, 330_000, 0)
    sample = Sample("b", "A", Metric.TIME, "wall_ns", run.wall_ns, run_queue_ns=run.run_queue_ns,
                    cpu_ns=run.user_ns + run.sys_ns)  # fmt: skip
    assert not is_preempted(sample)
    # the same figures counted as before: 2.5% of its wall time, preempted
    assert is_preempted(Sample("b", "A", Metric.TIME, "wall_ns", run.wall_ns,
                               run_queue_ns=run.queued_ns, cpu_ns=12_000_000))  # fmt: skip


def test_a_statement_s_own_threads_come_off_its_wait(monkeypatch: Any) -> None:
    # the worker's modules are stdlib scripts, untyped: loaded as a value
    statement_cpu: Any = importlib.import_module("perflab.worker.statement_cpu")

    # the measured thread waited 4 ms while the worker's other thread ran 3.9 ms of the 5 ms
    # the process ran beyond the thread's 10 ms
    run_queue_ns = iter([1_000_000, 5_000_000])
    process_ns = iter([0, 13_900_000])
    thread_ns = iter([0, 10_000_000])
    monkeypatch.setattr(statement_cpu, "read_run_queue_ns", lambda: next(run_queue_ns))
    monkeypatch.setattr(statement_cpu, "read_process_time_ns", lambda: next(process_ns))
    monkeypatch.setattr(statement_cpu, "read_thread_time_ns", lambda: next(thread_ns))

    def timed(loops: int, empty: bool = False) -> int:
        return 14_500_000

    assert statement_cpu.accounted(timed, 1) == (14_500_000, 10_000_000, 100_000)
