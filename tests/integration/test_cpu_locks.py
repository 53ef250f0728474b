"""Two real perflab runs at once: each measures on a CPU of its own; one forced onto the other's
CPU says so; the lock is released when a run is interrupted."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from perflab.machine.cpu_lock import holder, lock_directory
from perflab.machine.host import default_measurement_cpu, online_cpus
from tests.support.cli_commands import QUICK
from tests.support.tagged_processes import start

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(len(online_cpus()) < 2, reason="needs two CPUs"),
    pytest.mark.usefixtures("private_cpu_locks"),
]


def _run_args(json_path: Path, budget: str, *extra: str) -> tuple[str, ...]:
    return ("run", "--stmt", "sum(range(50))", "-v", "A", "-v", "B", "--budget", budget,
            "--quiet", "--json", str(json_path), *QUICK, *extra)  # fmt: skip


def _wait_for_lock(cpu: int, pid: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while holder(cpu) != pid:
        assert time.monotonic() < deadline, f"perflab pid {pid} never locked CPU {cpu}"
        time.sleep(0.05)


def test_concurrent_runs_pin_to_different_cpus_and_a_forced_one_says_it_shares(
    tmp_path: Path,
) -> None:
    cpu = default_measurement_cpu()
    # a precision it never reaches and a budget it never spends: it measures until interrupted,
    # however long a loaded machine keeps the second run from starting
    long_run = start(*_run_args(tmp_path / "long.json", "600", "--precision", "1e-9"), cwd=tmp_path)
    try:
        _wait_for_lock(cpu, long_run.process.pid)
        second = start(*_run_args(tmp_path / "second.json", "0.5"), cwd=tmp_path)
        forced = start(*_run_args(tmp_path / "forced.json", "0.5", "--cpu", str(cpu)), cwd=tmp_path)
        assert second.finish()[0] == 0
        assert forced.finish()[0] == 0
        assert long_run.process.poll() is None  # still measuring: the two really overlapped
    finally:
        long_run.process.send_signal(signal.SIGINT)  # Ctrl-C
        code, _, _ = long_run.finish()
    assert code == 130
    assert holder(cpu) is None  # released on Ctrl-C

    second_doc = json.loads((tmp_path / "second.json").read_text())
    assert second_doc["machine"]["pinned_cpu"] != cpu
    assert not [n for n in second_doc["notes"] if "share CPU" in n["message"]]
    forced_doc = json.loads((tmp_path / "forced.json").read_text())
    assert forced_doc["machine"]["pinned_cpu"] == cpu
    (note,) = [n for n in forced_doc["notes"] if "share CPU" in n["message"]]
    assert f"pid {long_run.process.pid}" in note["message"] and note["severity"] == "warning"
    assert os.getpid() != long_run.process.pid


def _wait_for_first_turn(cpu: int, pid: int, timeout_s: float = 120) -> None:
    """Until the run has sampled a block on `cpu` (it writes its pid into the turn file)."""
    path = lock_directory() / f"cpu{cpu}.turn"
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and path.read_text().strip() == str(pid)):
        assert time.monotonic() < deadline, (
            f"perflab pid {pid} never sampled on CPU {cpu}",
            sorted(p.name for p in path.parent.iterdir()),
            path.read_text() if path.exists() else None,
        )
        time.sleep(0.05)


def test_two_runs_on_one_cpu_take_turns_and_say_so_even_when_quiet(tmp_path: Path) -> None:
    cpu = default_measurement_cpu()
    # a precision it never reaches and a budget it never spends (CI's loaded run spent 60 s
    # before the second run sampled): it measures until interrupted
    first = start(*_run_args(tmp_path / "first.json", "600", "--precision", "1e-9", "--cpu",
                             str(cpu)), cwd=tmp_path)  # fmt: skip
    try:
        _wait_for_first_turn(cpu, first.process.pid)
        second = start(*_run_args(tmp_path / "second.json", "1", "--cpu", str(cpu)), cwd=tmp_path)
        code, _, err = second.finish()
        assert code == 0, err
        assert first.process.poll() is None  # still measuring: the two really overlapped
    finally:
        first.process.send_signal(signal.SIGINT)
        first.finish()
    doc = json.loads((tmp_path / "second.json").read_text())
    (note,) = [n for n in doc["notes"] if "took turns on CPU" in n["message"]]
    assert f"pid {first.process.pid}" in note["message"] and "waited" in note["message"]
    assert note["severity"] == "info"
    # --quiet prints no table, but says this
    assert "took turns on CPU" in err and f"pid {first.process.pid}" in err
