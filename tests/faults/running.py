"""Helpers for the process and input fault tests: run perflab as a user does, in a folder of its
own, with a unique tag in its environment that everything it starts inherits, and look for what
is still running afterwards (by the tag, or by a marker in a command line for processes that
drop their environment)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

TAG_VARIABLE = "PERFLAB_TEST_RUN"
STORE = Path(".perflab") / "perflab.db"
# short runs: the faults are the subject, not the precision
# small budgets: the minimum measurements, whatever the budget's plan says they cost
QUICK = (
    "--min-generations", "2", "--sample-ms", "1", "--seed", "3",
)  # fmt: skip


@dataclass
class Perflab:
    """One perflab process started by a test."""

    process: subprocess.Popen[str]
    tag: str
    cwd: Path

    def finish(self, timeout_s: float = 240) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            out, err = self.process.communicate()
            raise AssertionError(f"perflab did not finish within {timeout_s} s: {err}") from None
        return self.process.returncode, flat(out), flat(err)


def flat(text: str) -> str:
    """The text with its line breaks (the terminal's wrapping) as single spaces."""
    return " ".join(text.split())


def start(*args: str, cwd: Path) -> Perflab:
    tag = uuid.uuid4().hex
    env = dict(os.environ, **{TAG_VARIABLE: tag})
    process = subprocess.Popen(
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a signal the test sends reaches perflab alone
    )
    return Perflab(process, tag, cwd)


def run(*args: str, cwd: Path, timeout_s: float = 240) -> tuple[int, str, str, Perflab]:
    perflab = start(*args, cwd=cwd)
    code, out, err = perflab.finish(timeout_s)
    return code, out, err, perflab


def processes_left(perflab: Perflab, marker: str | None = None, grace_s: float = 2.0) -> list[str]:
    """Live processes carrying the run's tag (or `marker` in their command line), other than
    the test itself; each is killed after it was counted, so no test disturbs the next."""
    deadline = time.monotonic() + grace_s
    while True:
        found = _tagged(perflab.tag, marker)
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in found:
        try:
            os.kill(int(pid.split()[0]), signal.SIGKILL)
        except OSError:
            pass
    return found


def _tagged(tag: str, marker: str | None) -> list[str]:
    """The processes carrying `tag`, or `marker` in their command line unless they carry
    another run's tag: two test sessions (or workers) run the same commands at once."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    any_tag = f"{TAG_VARIABLE}=".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat[stat.rfind(")") + 2 :].startswith("Z"):
                continue
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        variables = environ.split(b"\0")
        ours = needle in variables
        another_runs = not ours and any(v.startswith(any_tag) for v in variables)
        if ours or (marker is not None and marker.encode() in cmdline and not another_runs):
            words = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name} {words}")
    return found


def wait_for_run(cwd: Path, timeout_s: float = 120) -> None:
    """Until perflab has created its run in the store (measuring has begun)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if runs(cwd):
            return
        time.sleep(0.1)
    raise AssertionError("perflab created no run")


def runs(cwd: Path) -> list[tuple[int, str]]:
    """(id, status) of every run in the store, read-only."""
    path = cwd / STORE
    if not path.exists():
        return []
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            rows = connection.execute("SELECT id, status FROM runs ORDER BY id")
            return [(int(row[0]), str(row[1])) for row in rows]
        finally:
            connection.close()
    except sqlite3.Error:
        return []


def samples(cwd: Path, run_id: int) -> int:
    connection = sqlite3.connect(f"file:{cwd / STORE}?mode=ro", uri=True, timeout=10)
    try:
        row = connection.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
        return int(row.fetchone()[0])
    finally:
        connection.close()


def contained_by_this_process() -> list[int]:
    """Live processes perflab started from this (test) process and left running, found by the
    container token the real runner gives everything it starts."""
    needle = f"PERFLAB_CONTAINER={os.getpid():07d}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat[stat.rfind(")") + 2 :].startswith("Z"):
                continue
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(item.startswith(needle) for item in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


PROMPT_S = 3.0  # < 1 s on an idle machine (measured); generous for a loaded one


def interrupt_during_command(tmp_path: Path, signals: list[signal.Signals]) -> None:
    """Send `signals` to a --cmd run while its command runs: perflab stops promptly with 130,
    keeps the run as incomplete and leaves no process behind."""
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
