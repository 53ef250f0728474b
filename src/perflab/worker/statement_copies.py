"""Copies of the statement worker that the measured code forked (os.fork() with no exec or
os._exit() in the child): a copy that returns into the worker's loop tells the worker and leaves,
and the worker replies that the set-up or the statement forked. Standard library only, Python
3.7+: it runs in the variant's interpreter, next to statement_worker.py."""

import os
import select
import time

# how long a worker waits, after the statement first ran, for a copy of itself that the
# statement forked to come back (it says so on the worker's alarm pipe as it leaves)
COPY_WAIT_S = 0.5
FORKED_ERROR = (
    "the %s forked a copy of the worker (os.fork() with no exec or os._exit() in the "
    "child), and the copy returned into perflab's loop: every sample would fork again"
)
_COPY_FROM = {"set-up": b"u", "statement": b"s"}  # what a copy writes on the alarm pipe


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
    """What tells the worker that a copy of itself came back: a process running this code with
    another pid is a copy the measured code forked; it tells the worker on this pipe and leaves,
    never answering the parent itself."""

    def __init__(self):
        self.pid = os.getpid()  # the worker's: a child of the protocol sets its own
        self.pipe = os.pipe()

    def leave_if_a_copy(self, where):
        """In a copy of this worker that the set-up or the statement forked, once it returned
        into the worker: say where to the worker and leave at once (no reply, no exit
        handlers)."""
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
            ready, _, _ = select.select([self.pipe[0]], [], [], 0)
            if ready:
                said = os.read(self.pipe[0], 4096)
                where = "set-up" if _COPY_FROM["set-up"] in said else "statement"
                return {"ok": False, "phase": "forked", "error": FORKED_ERROR % where}
            if children_before is None:
                return None
            now = children()
            running = [p for p in (now or ()) if p not in children_before and _same_program(p)]
            if not running or time.monotonic() > deadline:
                return None
            time.sleep(0.001)
