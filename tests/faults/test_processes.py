"""A benchmark cannot leave anything running or hang the run: what it starts is stopped when
its sample (command) or worker (statement) ends, and interrupts stop everything at once and
name the run that was kept."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest

from tests.faults.running import (
    QUICK,
    processes_left,
    run,
    runs,
    samples,
    start,
    wait_for_run,
)

pytestmark = pytest.mark.integration

PROMPT_S = 3.0  # < 1 s on an idle machine (measured); generous for a loaded one
LEFT_NOTE = "the benchmark left"


def _interrupt_during_command(tmp_path: Path, signals: list[signal.Signals]) -> None:
    perflab = start(
        "run",
        "--cmd",
        "sleep 103",
        "-v",
        "A",
        "-v",
        "B",
        "--budget",
        "3",
        "--min-measurements-anyway",
        cwd=tmp_path,
    )
    wait_for_run(tmp_path)
    time.sleep(1.0)  # the first `sleep 103` is running
    sent_at = time.monotonic()
    for number in signals:
        perflab.process.send_signal(number)
        time.sleep(0.05)
    code, _, err = perflab.finish()
    assert time.monotonic() - sent_at < PROMPT_S, err
    assert code == 130, err
    ((run_id, status),) = runs(tmp_path)
    assert f"kept as run {run_id}: perflab show {run_id}" in err
    assert status == "incomplete"
    assert processes_left(perflab, marker="sleep 103") == []


def test_ctrl_c_during_command(tmp_path: Path) -> None:
    """Ctrl-C during a --cmd run"""
    _interrupt_during_command(tmp_path, [signal.SIGINT])


def test_second_ctrl_c_during_command(tmp_path: Path) -> None:
    """A second Ctrl-C while perflab stops a --cmd run"""
    _interrupt_during_command(tmp_path, [signal.SIGINT, signal.SIGINT])


def test_sigterm_during_command(tmp_path: Path) -> None:
    """SIGTERM (CI cancellation) during a --cmd run"""
    _interrupt_during_command(tmp_path, [signal.SIGTERM])


def test_ctrl_c_during_statement_keeps_samples(tmp_path: Path) -> None:
    """Ctrl-C during a statement run, after samples were stored"""
    perflab = start(
        "run", "--stmt", "sum(range(100))", "-v", "A", "-v", "B env.X=1", "--budget", "60",
        *QUICK, cwd=tmp_path,
    )  # fmt: skip
    wait_for_run(tmp_path)
    ((run_id, _),) = runs(tmp_path)
    deadline = time.monotonic() + 60
    while samples(tmp_path, run_id) < 20 and time.monotonic() < deadline:
        time.sleep(0.2)
    perflab.process.send_signal(signal.SIGINT)
    code, _, err = perflab.finish()
    assert code == 130, err
    assert f"kept as run {run_id}: perflab show {run_id}" in err
    assert samples(tmp_path, run_id) >= 20
    assert processes_left(perflab) == []


def test_statement_children_hold_pipes(tmp_path: Path) -> None:
    """A statement starts a process that never ends (subprocess.Popen(['sleep', '1000']))"""
    code, out, err, perflab = run(
        "run", "--stmt", "subprocess.Popen(['sleep', '1000'])", "--setup", "import subprocess",
        "-v", "A", "-v", "B", "--budget", "1", "--sample-timeout", "20", *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert LEFT_NOTE in out and "processes running; they were stopped" in out
    ((run_id, status),) = runs(tmp_path)
    assert status == "complete" and samples(tmp_path, run_id) > 0
    assert processes_left(perflab, marker="sleep 1000") == []


def test_command_leaves_background_process(tmp_path: Path) -> None:
    """A command leaves a background process (sh -c 'sleep 78 & true')"""
    code, out, err, perflab = run(
        "run", "--cmd", "sh -c 'sleep 78 & true'", "-v", "A", "-v", "B", "--budget", "1",
        *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert LEFT_NOTE in out and "processes running; they were stopped" in out
    ((run_id, status),) = runs(tmp_path)
    assert status == "complete" and samples(tmp_path, run_id) > 0
    assert processes_left(perflab, marker="sleep 78") == []


ESCAPE = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.execve('/bin/sleep', ['sleep', '77.5'], {})\n"
    "    os._exit(0)\n"
    "os.wait()\n"
)


def test_command_child_escapes_session_and_environment(tmp_path: Path) -> None:
    """A command's child double-forks into a new session with an empty environment"""
    script = tmp_path / "escape.py"
    script.write_text(ESCAPE)
    code, out, err, perflab = run(
        "run", "--cmd", f"python3 {script}", "-v", "A", "-v", "B", "--budget", "1", *QUICK,
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert LEFT_NOTE in out
    assert processes_left(perflab, marker="sleep 77.5") == []


def test_statement_child_escapes_session_and_environment(tmp_path: Path) -> None:
    """A statement's child leaves the worker's session with an empty environment"""
    code, out, err, perflab = run(
        "run", "--stmt", "pass", "--setup",
        "import subprocess; subprocess.Popen(['sleep', '76.5'], start_new_session=True, env={})",
        "-v", "A", "-v", "B", "--budget", "1", *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert LEFT_NOTE in out
    assert processes_left(perflab, marker="sleep 76.5") == []


def test_hanging_statement_times_out(tmp_path: Path) -> None:
    """A statement that hangs (time.sleep(1000)) is stopped at --sample-timeout"""
    code, _, err, perflab = run(
        "run", "--stmt", "time.sleep(1000)", "--setup", "import time", "-v", "A", "-v", "B",
        "--sample-timeout", "3", *QUICK, cwd=tmp_path, timeout_s=120,
    )  # fmt: skip
    assert code == 3, err
    assert "did not answer within 3 s" in err
    assert runs(tmp_path)[0][1] == "incomplete"
    assert processes_left(perflab) == []


def test_a_failed_set_up_names_no_leftovers_and_its_time_is_what_it_took(tmp_path: Path) -> None:
    """A set-up that raises: the lens fails in one variant and perflab stops the other
    variant's workers (its own, under valgrind). Those are not processes the benchmark left,
    and the budget note says the lens failed after the time it really ran, and that the lens
    after it did not run (it read "instructions 7.6 s, time 11.4 s" and "the benchmark left 3
    processes running")."""
    code, out, err, perflab = run(
        "run", "--stmt", "x + 1", "--setup", "import os\nx = 1 / 0", "-v", "A", "-v", "B",
        "--metric", "instructions,time", "--verbose", cwd=tmp_path,
    )  # fmt: skip
    assert code != 0 and "ZeroDivisionError" in err, err
    assert LEFT_NOTE not in out, out
    assert re.search(r"instructions failed after \d+\.\d s \(planned \d+\.\d s\)", out), out
    assert re.search(r"time not run \(planned \d+\.\d s\)", out), out
    assert processes_left(perflab) == []
