"""Finding and stopping what a benchmark started (standard library only, Python 3.7+, Linux).

Used by perflab itself and by the command launcher, next to the commands it runs. A process
belongs to a *container* when it is the container's leader, shares the leader's session or
process group, carries the container's token in its environment (CONTAINER_VARIABLE), or
descends from such a process. A process that left the session (setsid) is still found by its
environment; one that did both and was orphaned is re-parented to the nearest child subreaper
(perflab, the command launcher, a statement worker), which then finds it among its children.

Imported by every statement worker before the benchmark's code: nothing heavy at module level
(no typing, ctypes only when asked to become a subreaper).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable

CONTAINER_VARIABLE = "PERFLAB_CONTAINER"
# build_reaper.py's last line on stderr, after a newline, before the number it stopped
REAPER_SAID = "perflab build reaper: left "
# ... instead, when it stopped the build itself (its time limit, or SIGTERM)
REAPER_TIMED_OUT = "perflab build reaper: stopped the build, left "
# prctl.h: orphaned descendants are re-parented to this process, so they can be found and stopped
_PR_SET_CHILD_SUBREAPER = 36
_MAX_ROUNDS = 50  # a process that forks while being stopped is found again in the next round
TERM_GRACE_S = 0.5  # what a descendant asked to stop (SIGTERM) gets before SIGKILL
_GIVE_UP_S = 2.0  # stopping descendants never takes longer (one stuck in the kernel is left)
# how often the process table is read again while descendants stop: short against TERM_GRACE_S
_POLL_S = 0.01


class ProcessEntry:
    """A process's line of /proc/PID/stat, the fields used here."""

    __slots__ = ("pid", "ppid", "pgid", "sid", "state", "start_ticks")

    def __init__(
        self, pid: int, ppid: int, pgid: int, sid: int, state: str, start_ticks: int
    ) -> None:
        self.pid = pid
        self.ppid = ppid
        self.pgid = pgid
        self.sid = sid
        self.state = state
        self.start_ticks = start_ticks


def become_subreaper() -> bool:
    """Orphans of this process's descendants are re-parented to it instead of init, so they
    can still be found, stopped and reaped. False where the kernel does not offer it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # here: only a process that becomes a subreaper pays for it

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (ImportError, OSError, AttributeError):  # a Python built without ctypes
        return False


def start_ticks(pid: int) -> int:
    """When the process started (clock ticks after boot); 0 when it cannot be read."""
    entry = read_entry(pid)
    return entry.start_ticks if entry is not None else 0


def read_entry(pid: int) -> ProcessEntry | None:
    """One process's entry from /proc/PID/stat; None when it is gone or unreadable."""
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


def process_table() -> dict[int, ProcessEntry]:
    """Every process's entry from /proc, by pid."""
    table: dict[int, ProcessEntry] = {}
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


def carries_no_token(pid: int) -> bool:
    """Whether the process's environment holds no CONTAINER_VARIABLE at all (it cleared its
    environment: `env -i`); False where it cannot be read, and for a child still running
    perflab's own program (forked, not yet exec'd: it shows perflab's environment until its
    exec gives it its own, token included, so another thread's launch is never taken for one)."""
    try:
        if os.readlink("/proc/%d/exe" % pid) == os.readlink("/proc/self/exe"):
            return False
    except OSError:
        return False
    try:
        with open("/proc/%d/environ" % pid, "rb") as environ:
            data = environ.read()
    except OSError:
        return False
    prefix = ("%s=" % CONTAINER_VARIABLE).encode()
    return not any(item.startswith(prefix) for item in data.split(b"\0"))


class Container:
    """Which processes belong to a container (see the module docstring) other than its leader,
    which its owner kills and waits for (its pid may be reused once it is reaped).
    `adopted_by`: also every child of this subreaper, and their descendants. `orphans_of`:
    also the children of this subreaper that carry no container's token (orphans that left
    the session and cleared their environment: none of its own), but those in `launched`
    (started by the subreaper itself: mid-exec, a child's environment reads empty). Only
    processes started at or after `since_ticks` (clock ticks after boot) can belong to it."""

    __slots__ = ("leader", "token", "adopted_by", "since_ticks", "orphans_of", "launched")

    def __init__(
        self,
        leader: int | None,
        token: str | None,
        *,
        adopted_by: int | None = None,
        since_ticks: int = 0,
        orphans_of: int | None = None,
        launched: Iterable[int] = (),
    ) -> None:
        self.leader = leader
        self.token = token
        self.adopted_by = adopted_by
        self.since_ticks = since_ticks
        self.orphans_of = orphans_of
        self.launched = frozenset(launched)

    def members(self, table: dict[int, ProcessEntry]) -> set[int]:
        """The container's processes in `table`, the leader left out."""
        leader = self.leader
        found: set[int] = set()
        for entry in table.values():
            if entry.pid == leader or entry.start_ticks < self.since_ticks:
                continue
            if leader is not None and leader in (entry.sid, entry.pgid):
                found.add(entry.pid)
            elif self.adopted_by is not None and entry.ppid == self.adopted_by:
                found.add(entry.pid)
            elif (
                self.token is not None
                and entry.state != "Z"
                and carries_token(entry.pid, self.token)
            ):
                found.add(entry.pid)
            elif self._orphan(entry):
                found.add(entry.pid)
        return (found | descendants(found, table)) - {leader}

    def _orphan(self, entry: ProcessEntry) -> bool:
        return (
            self.orphans_of is not None
            and entry.ppid == self.orphans_of
            and entry.pid not in self.launched
            and entry.state != "Z"
            and carries_no_token(entry.pid)
        )

    def stop(self, spare: Iterable[int] = ()) -> int:
        """Kill (SIGKILL) every live process of the container (but the leader and `spare`),
        reap the ones that are this process's children, and return how many were stopped.
        Zombies are reaped where they are ours, not counted."""
        spared = set(spare) | {os.getpid()}
        me = os.getpid()
        stopped: set[int] = set()
        for _ in range(_MAX_ROUNDS):
            table = process_table()
            targets = [pid for pid in self.members(table) if pid not in spared]
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


def descendants(roots: Iterable[int], table: dict[int, ProcessEntry]) -> set[int]:
    """The pids descending from `roots` in `table` (the roots excluded)."""
    children: dict[int, list[int]] = {}
    for entry in table.values():
        children.setdefault(entry.ppid, []).append(entry.pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def stop_descendants(grace_s: float = TERM_GRACE_S) -> int:
    """Stop every live descendant of this process (for a child subreaper, the orphans
    re-parented to it included): SIGTERM, up to `grace_s` to exit, then SIGKILL; reap those
    that are its children, and return how many were running. Never waits long: after
    _GIVE_UP_S, what still runs is left."""
    me = os.getpid()
    asked: set[int] = set()
    started = time.monotonic()
    while time.monotonic() - started < _GIVE_UP_S:
        table = process_table()
        found = descendants([me], table)
        _reap_exited(me, found, table)
        live = [pid for pid in found if table[pid].state != "Z"]
        if not live:
            break
        force = time.monotonic() - started >= grace_s
        for pid in live:
            if (force or pid not in asked) and _signal(pid, force):
                asked.add(pid)
        time.sleep(_POLL_S)
    return len(asked)


def _reap_exited(me: int, found: set[int], table: dict[int, ProcessEntry]) -> None:
    for pid in found:
        if table[pid].ppid == me and table[pid].state == "Z":
            _reap(pid)


def _signal(pid: int, kill: bool) -> bool:
    """SIGKILL (`kill`) or SIGTERM; whether it was delivered."""
    try:
        os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass  # not ours after all, or reaped by someone else
