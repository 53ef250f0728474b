"""Fault tests run perflab as a user would (a real store, real processes) and record, per test,
what bench/reliability_table.py turns into docs/reliability.md: the case (the test's docstring),
the outcome, the samples kept and the processes left behind.

Every test here runs with a unique tag in its environment, which every process it starts
inherits (perflab, its workers, the benchmark's own children, reparented orphans alike): after
the test, any process still carrying the tag was left behind. It is counted, then killed, so one
test's leftovers never disturb the next.

Set PERFLAB_FAULT_REPORT=PATH to have the records written there as JSON at the end.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

TAG_VARIABLE = "PERFLAB_FAULT_TAG"
REPORT_VARIABLE = "PERFLAB_FAULT_REPORT"
# short runs: the faults are the subject, not the precision
FAST = (
    "--budget", "0.3",
    "--min-generations", "2", "--sample-ms", "1", "--seed", "3",
)  # fmt: skip


@dataclass
class FaultRecord:
    test: str
    case: str
    outcome: str = "not run"
    samples_kept: int | None = None
    processes_left: int | None = None


@dataclass
class Fault:
    """What a test tells the record beyond pass/fail."""

    tag: str
    samples_kept: int | None = None


_RECORDS: dict[str, FaultRecord] = {}


def tagged_processes(tag: str) -> list[int]:
    """Processes (other than this one) whose environment carries the tag."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def processes_left(tag: str, grace_s: float = 3.0) -> list[int]:
    """The tagged processes still alive after a grace period (exits are asynchronous)."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = [pid for pid in tagged_processes(tag) if not _is_zombie(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def samples_in_stores(folder: Path) -> int | None:
    """Samples held by the perflab stores under folder, read-only; None when there is none."""
    total: int | None = None
    for path in folder.rglob("*.db"):
        try:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                count = connection.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            finally:
                connection.close()
        except sqlite3.Error:
            continue
        total = (total or 0) + int(count)
    return total


def perflab(
    *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line, run as a user runs it (the test's tag is in os.environ)."""
    return subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def git(repo: Path, *args: str) -> str:
    """git in `repo` as a fixed user; what it printed."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def data_repo(folder: Path, texts: tuple[str, ...] = ("one",)) -> Path:
    """`folder/repo`: a git repository on main with one commit of data.txt per text, the
    first tagged `base`."""
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for text in texts:
        (repo / "data.txt").write_text(text + "\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", text)
        if text == texts[0]:
            git(repo, "tag", "base")
    return repo


def start_perflab(*args: str, cwd: Path, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        text=True,
        **popen,
    )


@pytest.fixture(autouse=True)
def fault(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Fault]:
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG_VARIABLE, tag)
    recorder = Fault(tag)
    yield recorder
    left = processes_left(tag)
    for pid in left:  # no test leaves anything running on the machine
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    record = _RECORDS.get(request.node.nodeid)
    if record is not None:
        record.processes_left = len(left)
        record.samples_kept = (
            recorder.samples_kept
            if recorder.samples_kept is not None
            else samples_in_stores(tmp_path)
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    doc = getattr(getattr(item, "function", None), "__doc__", None) or item.name
    case = " ".join(doc.split())
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        case += f" [{callspec.id}]"
    _RECORDS[item.nodeid] = FaultRecord(test=item.nodeid, case=case)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    record = _RECORDS.get(item.nodeid)
    if record is None:
        return
    if report.when == "setup" and report.skipped:
        record.outcome = "skipped"
    elif report.when == "call":
        record.outcome = "skipped" if report.skipped else report.outcome
    elif report.when == "teardown" and report.failed:
        record.outcome = "failed"


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(REPORT_VARIABLE)
    if target:
        Path(target).write_text(json.dumps([asdict(r) for r in _RECORDS.values()], indent=2) + "\n")
