"""Two runs on one CPU take turns on it a sample block at a time (cpu_lock.CpuTurns): their
blocks never overlap, they alternate, and each knows how long it waited and for whom."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perflab.machine.cpu_lock import CpuTurns

pytestmark = pytest.mark.integration

BLOCKS = 12
# a sample block: long enough that the waiting run, woken on a busy machine (another test
# worker measuring beside this one), marks that it waits before the holder's next turn
BLOCK_S = 0.05
RUN = """
import json, os, sys, time
from pathlib import Path
from perflab.machine.cpu_lock import CpuTurns

directory, blocks, block_s = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
turns = CpuTurns(3, directory)
while not (directory / "go").exists():
    time.sleep(0.001)
spans = []
for _ in range(blocks):
    turns.take()
    start = time.monotonic()
    time.sleep(block_s)  # a sample block
    spans.append((start, time.monotonic()))
    turns.give()
print(json.dumps({"pid": os.getpid(), "spans": spans, "waited_s": turns.waited_s,
                  "waited_turns": turns.waited_turns, "turns": turns.turns,
                  "partners": sorted(turns.partners)}))
"""


def test_two_runs_alternate_their_blocks_and_know_they_waited(tmp_path: Path) -> None:
    directory = tmp_path / "locks"
    directory.mkdir(mode=0o700)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUN, str(directory), str(BLOCKS), str(BLOCK_S)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(2)
    ]
    time.sleep(0.5)  # both started
    (directory / "go").touch()
    first, second = (json.loads(run.communicate(timeout=60)[0]) for run in runs)
    for one, other in ((first, second), (second, first)):
        assert one["turns"] == BLOCKS
        assert one["partners"] == [other["pid"]]
        # each waited for the other's block in most of its turns
        assert one["waited_turns"] >= BLOCKS // 2, one
        assert one["waited_s"] >= BLOCK_S * one["waited_turns"] * 0.5
    for start, end in first["spans"]:
        assert all(end <= s or e <= start for s, e in second["spans"]), "blocks overlapped"
    assert not list(directory.glob("cpu3.waiting.*"))


def test_a_run_alone_never_waits(tmp_path: Path) -> None:
    turns = CpuTurns(0, tmp_path / "locks")
    for _ in range(3):
        turns.take()
        turns.give()
    turns.close()
    assert (turns.turns, turns.waited_turns, turns.waited_s, turns.partners) == (3, 0, 0.0, set())


def test_a_waiting_mark_of_a_run_that_ended_is_ignored_and_removed(tmp_path: Path) -> None:
    turns = CpuTurns(1, tmp_path / "locks")
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    mark = tmp_path / "locks" / f"cpu1.waiting.{int(ended.stdout)}"
    mark.touch()
    turns.take()
    started = time.monotonic()
    turns.give()
    assert time.monotonic() - started < 0.25  # it did not wait for a run that is gone
    assert not mark.exists()


def test_runs_that_take_turns_say_so_while_they_run(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mine = CpuTurns(2, tmp_path / "locks")
        (tmp_path / "locks" / f"cpu2.turns.{other.pid}").touch()  # as its CpuTurns would
        assert mine.takers() == (other.pid,)
        mine.close()
        assert [p.name for p in (tmp_path / "locks").glob("cpu2.turns.*")] == [
            f"cpu2.turns.{other.pid}"
        ]
    finally:
        other.kill()
        other.wait()
    assert CpuTurns(2, tmp_path / "locks").takers() == ()  # an ended run's mark is gone
