"""The Python API leaves nothing running when a run fails midway. perflab.api.run runs in a host
process (this test's), which does not adopt orphans as the perflab command does: a set-up or a
statement that raises after the set-up started a daemon (double fork, a session of its own, an
empty environment, so that neither perflab's session nor its token finds it; only the worker,
its subreaper, does), a build that fails after starting a child, and a build that starts such a
daemon (its reaper, the build's subreaper, stops it). Afterwards the test process has the
children it had, no process carries this process's perflab token, and the daemons are gone."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import perflab.api as perflab
from perflab.records.kinds import RunStatus
from perflab.worker.process_tree import CONTAINER_VARIABLE, process_table
from tests.support.git_repo import commit, git

pytestmark = pytest.mark.integration

# the daemon: double-forked into a session of its own with an empty environment, `MARKER` as
# its argv[0] so that the test finds it
DAEMON = """
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve({sleep!r}, [{marker!r}, '300'], {{}})
    os._exit(0)
os.wait()
"""
GONE_WITHIN_S = 3.0  # a stopped process may take a moment to leave the process table


def _children() -> set[int]:
    me = os.getpid()
    return {e.pid for e in process_table().values() if e.ppid == me and e.state != "Z"}


def _carrying_my_token() -> list[int]:
    """Processes started by this process's perflab: their environment holds its token."""
    needle = f"{CONTAINER_VARIABLE}={os.getpid():07d}-".encode()
    found = []
    for pid in process_table():
        with contextlib.suppress(OSError):
            if needle in Path(f"/proc/{pid}/environ").read_bytes():
                found.append(pid)
    return found


def _marked(marker: str) -> list[int]:
    found = []
    for pid in process_table():
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique argv[0] (or a part of it) for a test's daemons; whatever carries it in its
    command line is killed after the test."""
    mark = f"perflab-api-daemon-{uuid.uuid4().hex}"
    yield mark
    for pid in _marked(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _left(marker: str, children_before: set[int]) -> dict[str, list[int]]:
    """What is still running that the failed run started, after a moment to go."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while True:
        left = {
            "children": sorted(_children() - children_before),
            "carrying perflab's token": _carrying_my_token(),
            "daemons": _marked(marker),
        }
        if not any(left.values()) or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _daemon(marker: str) -> str:
    return DAEMON.format(sleep=shutil.which("sleep"), marker=marker)


@pytest.mark.parametrize(
    ("stmt", "raises"),
    [("raise ValueError('no data')", ""), ("pass", "raise ValueError('no data')")],
    ids=["statement raises", "set-up raises"],
)
def test_a_failed_benchmark_leaves_nothing_running(marker: str, stmt: str, raises: str) -> None:
    before = _children()
    experiment = perflab.make_experiment(
        stmt=stmt, setup=_daemon(marker) + raises, variants=["a", "b"], budget_s=0.3,
        metrics="time",
    )  # fmt: skip
    result = perflab.run(experiment, store_path=None)
    assert result.status is RunStatus.INCOMPLETE
    assert "ValueError: no data" in (result.failures[0].detail or "")
    assert _left(marker, before) == {"children": [], "carrying perflab's token": [], "daemons": []}


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_a_failed_build_leaves_nothing_running(
    marker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base's build fails after starting a child that outlives it (in the build's session,
    with perflab's token)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    sleep = shutil.which("sleep")
    daemon = f"import subprocess\nsubprocess.Popen([{marker!r}, '300'], executable={sleep!r})\n"
    commit(repo, "a build that fails", {"daemon.py": daemon})
    git(repo, "tag", "base")
    commit(repo, "a build that works", {"built": ""})
    monkeypatch.chdir(repo)
    before = _children()
    experiment = perflab.make_experiment(
        stmt="pass", variants=["old git=base", "new git=main"], metrics="time", budget_s=0.3,
        build=f"{sys.executable} daemon.py && test -e built",
    )  # fmt: skip
    result = perflab.run(experiment, store_path=None, cache_dir=tmp_path / "cache")
    assert result.status is RunStatus.INCOMPLETE
    assert "the build" in result.failures[0].message
    assert _left(marker, before) == {"children": [], "carrying perflab's token": [], "daemons": []}


@pytest.mark.parametrize(
    "starts",
    # the build waits a moment: the daemon has cleared its environment (perflab's token) by
    # the time the build ends, so that only a subreaper finds it
    ["setsid {daemon} 300 &", "setsid -f env -i {daemon} 300; sleep 1"],
    ids=["in the background, its own session", "its own session, an empty environment"],
)
def test_a_builds_daemon_is_stopped_when_the_build_ends(
    marker: str, tmp_path: Path, starts: str
) -> None:
    """Stopped as the build ends, before anything is measured, and said as the build's."""
    daemon = tmp_path / marker  # its path is its argv[0]: `marker` in its command line
    daemon.symlink_to(shutil.which("sleep") or "/bin/sleep")
    build = starts.format(daemon=daemon)
    before = _children()
    experiment = perflab.make_experiment(
        cmd="true", variants=["a", f"b build={build!r}"], metrics="time", budget_s=0.3
    )
    result = perflab.run(experiment, store_path=None)
    assert result.status is RunStatus.COMPLETE, result.failures
    said = [n.message for n in result.notes if n.variant == "b" and "the build" in n.message]
    assert said == [f"the build {build!r} left 1 process(es) running when it ended; "
                    "perflab stopped them rather than wait for them"]  # fmt: skip
    assert _left(marker, before) == {
        "children": [], "carrying perflab's token": [], "daemons": []
    }  # fmt: skip


def test_a_build_that_runs_out_of_time_is_stopped_with_its_daemon(
    marker: str, tmp_path: Path
) -> None:
    """The reaper, not a kill of its process group, ends a build at its time limit: the daemon
    the build started (own session, empty environment, re-parented to the reaper) goes too."""
    daemon = tmp_path / marker
    daemon.symlink_to(shutil.which("sleep") or "/bin/sleep")
    build = f"setsid -f env -i {daemon} 300; sleep 300"
    before = _children()
    experiment = perflab.make_experiment(
        cmd="true", variants=["a", f"b build={build!r}"], metrics="time", budget_s=0.3,
        build_timeout_s=2,
    )  # fmt: skip
    result = perflab.run(experiment, store_path=None)
    assert result.status is RunStatus.INCOMPLETE
    assert "timed out" in result.failures[0].message, result.failures
    assert _left(marker, before) == {"children": [], "carrying perflab's token": [], "daemons": []}
