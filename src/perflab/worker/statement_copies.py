"""Copies of the statement worker that the measured code forked (os.fork() with no exec or
os._exit() in the child). A copy never holds the protocol's channel, and one that returns into the
worker's loop tells the worker and leaves, and the worker replies that the set-up, the statement or
the code it ran forked. Standard library only, Python 3.7+: it runs in the variant's interpreter,
next to statement_worker.py."""

import os
import select
import sys
import time

# how long a worker waits, after the code that forked ran, for a copy of itself to come back
# (it says so on the worker's alarm pipe as it leaves); the wait ends when the copy does, and a
# busy 2-core machine can keep a copy off the CPU for most of a second
COPY_WAIT_S = 3.0
FORKED_ERROR = (
    "the %s forked a copy of the worker (os.fork() with no exec or os._exit() in the "
    "child), and the copy returned into perflab's loop: every sample would fork again"
)
# what a copy writes on the alarm pipe, and the code it says forked it
_COPY_FROM = {
    "set-up": b"u",
    "statement": b"s",
    "--check expression": b"c",
    "benchmark's code": b"x",
}
_FIRST_SAID = (b"u", b"s", b"c", b"x")  # the earliest code that forked names it


def children():
    """This process's children (every thread's), or None where Linux does not list them."""
    found = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open("/proc/self/task/%s/children" % task) as listed:
                found.update(int(pid) for pid in listed.read().split())
    except (OSError, ValueError):
        return None
    return found


def _same_program(pid):
    """Whether child `pid` still runs this program (a fork that did not exec)."""
    try:
        return os.readlink("/proc/%d/exe" % pid) == os.readlink("/proc/self/exe")
    except OSError:
        return False  # gone, a zombie, or not ours to read


class CopyAlarm:
    """What keeps a copy of this worker off the protocol and tells the worker that one came
    back: in a process that the measured code forked, the channel's descriptors read and write
    /dev/null (whatever the copy replies, flushes or reads never reaches the parent); one that
    returns into the worker tells it on this pipe and leaves, never answering itself."""

    def __init__(self, channel=()):
        self.pid = os.getpid()  # the worker's: a child of the protocol sets its own
        self.pipe = os.pipe()
        self.channel = tuple(channel)  # the protocol's descriptors (request, reply)
        self._forking = False  # the worker forks a child of the protocol, which keeps them
        # multiprocessing's children (a pool's workers) end with os._exit(), never in the
        # worker: not waited for as copies that may come back (they stay as long as the pool)
        self.pool_children = set()
        self._children_before_pool_fork = None
        register = getattr(os, "register_at_fork", None)
        if self.channel and register is not None:
            register(
                before=self._before_fork,
                after_in_parent=self._after_fork_in_parent,
                after_in_child=self._detach_copy,
            )

    def _before_fork(self):
        try:
            caller = sys._getframe(1).f_globals.get("__name__", "")  # called os.fork()
        except (AttributeError, ValueError):  # an interpreter without frames to read
            return
        if caller.startswith("multiprocessing."):
            self._children_before_pool_fork = children()

    def _after_fork_in_parent(self):
        before, self._children_before_pool_fork = self._children_before_pool_fork, None
        if before is not None:
            self.pool_children.update((children() or set()) - before)

    def _detach_copy(self):
        """In every child forked from this process but the protocol's own: the channel is
        /dev/null (a copy must never answer, nor hold the parent's pipe open)."""
        self._children_before_pool_fork = None
        if self._forking:
            return
        null = os.open(os.devnull, os.O_RDWR)
        try:
            for fd in self.channel:
                os.dup2(null, fd, inheritable=False)
        finally:
            os.close(null)

    def fork_child(self):
        """os.fork() for a child of the protocol (a fork server's), which keeps the channel and
        has an alarm of its own: a copy its code forks cannot alarm its server's next child."""
        self._forking = True
        pid = os.fork()
        self._forking = False
        if pid == 0:
            os.close(self.pipe[0])
            os.close(self.pipe[1])
            self.pid = os.getpid()
            self.pipe = os.pipe()
        return pid

    def leave_if_a_copy(self, where):
        """In a copy of this worker that the measured code forked, once it returned into the
        worker: say where to the worker and leave at once (no reply, no exit handlers)."""
        if os.getpid() != self.pid:
            try:
                os.write(self.pipe[1], _COPY_FROM[where])
            finally:
                os._exit(0)

    def came_back(self, children_before=None):
        """The reply saying a copy of this worker came back (see leave_if_a_copy), or None;
        with the children there were before the code ran, waits up to COPY_WAIT_S for a new
        child that still runs this program (not exec'd) to come back or go."""
        deadline = time.monotonic() + COPY_WAIT_S
        while True:
            # the pipe is read once more after the copy is seen gone: it writes, then exits,
            # and may do both between this read and the look at the children
            gone = children_before is None or not self._copy_still_runs(children_before)
            ready, _, _ = select.select([self.pipe[0]], [], [], 0)
            if ready:
                return self._reply_to(os.read(self.pipe[0], 4096))
            if gone or time.monotonic() > deadline:
                return None
            time.sleep(0.001)

    def _copy_still_runs(self, children_before):
        """Whether a child forked since `children_before` still runs this program (not exec'd
        and not one of a pool's)."""
        now = children() or set()
        self.pool_children &= now  # a pid that ended may come again, as a copy
        new = now - children_before - self.pool_children
        return any(_same_program(p) for p in new)

    @staticmethod
    def _reply_to(said):
        first = next((code for code in _FIRST_SAID if code in said), None)
        if first is None:
            # not a copy's word: code that replaced the pipe's descriptor (the worker names
            # clobbered descriptors itself)
            return None
        where = next(name for name, code in _COPY_FROM.items() if code == first)
        return {"ok": False, "phase": "forked", "error": FORKED_ERROR % where}
