"""Finding what a benchmark started (worker/process_tree.py), from /proc read in this process:
descendants through every generation, this process's own entry and token, and nothing for a
process that is gone. Stopping real processes is tests/integration's."""

from __future__ import annotations

import os

from perflab.worker.process_tree import (
    CONTAINER_VARIABLE,
    ProcessEntry,
    carries_token,
    descendants,
    process_table,
    read_entry,
    start_ticks,
)

GONE = 2**31 - 1  # above any pid the kernel hands out


def entry(pid: int, ppid: int) -> ProcessEntry:
    return ProcessEntry(pid, ppid, pgid=pid, sid=pid, state="S", start_ticks=pid)


def test_descendants_are_children_through_every_generation_once() -> None:
    table = {
        e.pid: e for e in (entry(10, 1), entry(11, 10), entry(12, 11), entry(13, 10), entry(20, 1))
    }
    assert descendants([10], table) == {11, 12, 13}
    assert descendants([11, 12], table) == {12}
    assert descendants([99], table) == set()


def test_this_process_is_read_from_proc_and_a_gone_one_is_none() -> None:
    me = read_entry(os.getpid())
    assert me is not None and me.pid == os.getpid() and me.ppid == os.getppid()
    assert me.start_ticks == start_ticks(os.getpid()) > 0
    assert os.getpid() in process_table()
    assert read_entry(GONE) is None and start_ticks(GONE) == 0


def test_a_token_not_in_the_environment_or_of_a_gone_process_is_not_carried() -> None:
    assert not carries_token(GONE, "anything")
    assert not carries_token(os.getpid(), "no-such-token-at-all")
    assert CONTAINER_VARIABLE == "PERFLAB_CONTAINER"  # what launchers set, and this reads
