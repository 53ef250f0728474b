"""Finding and stopping what a benchmark started (standard library only, Python 3.7+, Linux).

Used by perflab itself and by the command launcher, next to the commands it runs. A process
belongs to a *container* when it is the container's leader, shares the leader's session or
process group, carries the container's token in its environment (CONTAINER_VARIABLE), or
descends from such a process. A process that left the session (setsid) is still found by its
environment; one that did both and was orphaned is re-parented to the nearest child subreaper
(perflab, the command launcher), which then finds it among its children.
"""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Dict, Iterable, List, NamedTuple, Optional, Set

CONTAINER_VARIABLE = "PERFLAB_CONTAINER"
_PR_SET_CHILD_SUBREAPER = 36
_MAX_ROUNDS = 50  # a process that forks while being stopped is found again in the next round


class ProcessEntry(NamedTuple):
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start_ticks: int


def become_subreaper() -> bool:
    """Orphans of this process's descendants are re-parented to it instead of init, so they
    can still be found, stopped and reaped. False where the kernel does not offer it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def start_ticks(pid: int) -> int:
    """When the process started (clock ticks after boot); 0 when it cannot be read."""
    entry = read_entry(pid)
    return entry.start_ticks if entry is not None else 0


def read_entry(pid: int) -> Optional[ProcessEntry]:
    try:
        with open("/proc/%d/stat" % pid, "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    try:
        fields = text.rsplit(b")", 1)[1].split()
        return ProcessEntry(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            state=fields[0].decode("ascii", "replace"),
            start_ticks=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def process_table() -> Dict[int, ProcessEntry]:
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    for name in names:
        if name.isdigit():
            entry = read_entry(int(name))
            if entry is not None:
                table[entry.pid] = entry
    return table


def carries_token(pid: int, token: str) -> bool:
    """Whether the process's environment holds CONTAINER_VARIABLE=token (or a token that
    starts with `token` and a dash: the containers of one perflab share a prefix)."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as environ:
            data = environ.read()
    except OSError:
        return False
    needle = ("%s=%s" % (CONTAINER_VARIABLE, token)).encode()
    for item in data.split(b"\0"):
        if item == needle or item.startswith(needle + b"-"):
            return True
    return False


def members(
    leader: Optional[int],
    token: Optional[str],
    table: Dict[int, ProcessEntry],
    adopted_by: Optional[int] = None,
    since_ticks: int = 0,
) -> Set[int]:
    """The processes of a container (see the module docstring) other than the leader, which
    its owner kills and waits for (its pid may be reused once it is reaped).
    `adopted_by`: also every child of this subreaper, and their descendants. Only processes
    started at or after `since_ticks` (clock ticks after boot) can belong to it."""
    found = set()
    for entry in table.values():
        if entry.pid == leader or entry.start_ticks < since_ticks:
            continue
        if leader is not None and leader in (entry.sid, entry.pgid):
            found.add(entry.pid)
        elif adopted_by is not None and entry.ppid == adopted_by:
            found.add(entry.pid)
        elif token is not None and entry.state != "Z" and carries_token(entry.pid, token):
            found.add(entry.pid)
    return (found | descendants(found, table)) - {leader}


def descendants(roots: Iterable[int], table: Dict[int, ProcessEntry]) -> Set[int]:
    children: Dict[int, List[int]] = {}
    for entry in table.values():
        children.setdefault(entry.ppid, []).append(entry.pid)
    found: Set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def stop(
    leader: Optional[int],
    token: Optional[str],
    *,
    spare: Iterable[int] = (),
    adopted_by: Optional[int] = None,
    since_ticks: int = 0,
) -> int:
    """Kill (SIGKILL) every live process of the container (but the leader and `spare`), reap
    the ones that are this process's children, and return how many were stopped. Zombies are
    reaped where they are ours, not counted."""
    spared = set(spare) | {os.getpid()}
    me = os.getpid()
    stopped: Set[int] = set()
    for _ in range(_MAX_ROUNDS):
        table = process_table()
        targets = [
            pid
            for pid in members(leader, token, table, adopted_by, since_ticks)
            if pid not in spared
        ]
        live = [pid for pid in targets if table[pid].state != "Z"]
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
                stopped.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in targets:
            if table[pid].ppid == me and (pid in stopped or table[pid].state == "Z"):
                _reap(pid)
        if not live:
            break
    return len(stopped)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass  # not ours after all, or reaped by someone else
