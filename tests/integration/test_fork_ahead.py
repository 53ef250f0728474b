"""A fork server's children forked ahead: all at once, each waiting until a later "fork"
releases it with that request's environment, so that every one starts from the server's state
before the first (the instructions lens's children of one server counted sorted(range(200))
0.24% apart when each was forked after the one before it had exited)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import WorkerLaunch
from perflab.records.model import Benchmark, Variant

pytestmark = pytest.mark.integration


def _server() -> ForkServerClient:
    return ForkServerClient(
        SubprocessRunner(),
        Benchmark("pid", stmt="pass", setup="import os"),
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
    )


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(child) for child in (task / "children").read_text().split()}
    return out


def test_children_forked_ahead_are_released_in_turn_with_their_own_environment() -> None:
    server = _server()
    try:
        seen = []
        for index in range(3):
            child = server.worker(env={"WHICH": str(index)}, ahead=2 if index == 0 else 0)
            with child:
                if index == 0:  # the other two wait, forked at the same moment
                    assert len(_children(server.process.pid)) == 3
                assert child.pid != server.process.pid
                seen.append(child.pid)
                # released with this request's environment, not the first one's
                reply = child.call({"op": "evaluate", "expr": "os.environ['WHICH']"})
                assert reply["ok"] and str(index) in json.dumps(reply["value"]), reply
        assert len(set(seen)) == 3
        assert _children(server.process.pid) == set()
    finally:
        server.close()


def test_a_child_forked_ahead_and_never_released_leaves_with_its_server() -> None:
    server = _server()
    with server.worker(ahead=1) as child:
        (waiting,) = _children(server.process.pid) - {child.pid}
    server.close()  # quit: its end of the waiting child's pipe closes
    deadline = time.monotonic() + 10
    while Path(f"/proc/{waiting}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{waiting}").exists()


def test_a_child_runs_its_own_exit_functions_once(tmp_path: Path) -> None:
    """What a forked child's set-up registers to run at exit (a fixture's teardown) runs when
    the child quits, once: the child leaves with os._exit, which skips them unless it runs
    them itself."""
    marks = tmp_path / "marks"
    write = f"lambda: open({str(marks)!r}, 'a').write('%s %d\\n' % (WHO, os.getpid()))"
    server = ForkServerClient(
        SubprocessRunner(),
        Benchmark(
            "exit", stmt="pass", setup=f"import atexit, os\nWHO = 'setup'\natexit.register({write})"
        ),
        Variant("A"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=30),
    )
    try:
        with server.worker() as child:
            pid = child.pid
        assert marks.read_text().splitlines() == [f"setup {pid}"]
    finally:
        server.close()
    assert marks.read_text().splitlines() == [f"setup {pid}"]
