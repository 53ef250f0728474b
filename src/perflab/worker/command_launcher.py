"""perflab command launcher: runs whole commands and times them (stdlib only).

The parent starts it pinned to the measuring CPU, so the commands it starts inherit the pinning
without a fork-time hook, and their wall time is taken next to the process, not across a pipe.

Request:  {"op": "run", "argv": [...], "env": {...}, "cwd": str|null, "timeout_s": float}
Reply:    {"ok": true, "wall_ns", "returncode", "timed_out", "user_ns", "sys_ns", "maxrss_kb",
           "cpu", "stderr_tail", "stderr_bytes", "left", "nivcsw", "run_queue_ns"}
          (failures to start: {"ok": false, "error": text})
nivcsw: involuntary context switches (wait4's rusage: the command and the children it waited
for); run_queue_ns: the time the command's process waited runnable on a run queue, read from its
/proc/PID/schedstat after it exited and before it is reaped (null where unavailable).

Each command runs in its own session with the launcher's container token in its environment; the
launcher is a child subreaper. When the command ends, whatever it left running is killed and
counted ("left"), so no run of a command outlives its sample.

The command's stderr goes through a pipe of which only the last bytes are kept (and all counted,
"stderr_bytes"): nothing is written to disk, and memory stays bounded whatever it writes.
"""

import json
import os
import select
import signal
import subprocess
import sys
import threading
from time import perf_counter_ns

import process_tree  # next to this script; perflab.worker.process_tree

_TOKEN = os.environ.get(process_tree.CONTAINER_VARIABLE)
_SINCE_TICKS = process_tree.start_ticks(os.getpid())  # what the commands start is younger

_STDERR_TAIL_BYTES = 4000


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _current_cpu():
    try:
        with open("/proc/self/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def _wait_exited(pid):
    """Wait for the command to exit without reaping it (so its /proc entry, a zombie's, still
    holds its scheduler totals). False where that cannot be done: wait4 then waits."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        return False
    try:
        waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _run_queue_ns(pid):
    try:
        with open("/proc/%d/schedstat" % pid, "rb") as stat:
            return int(stat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


class _Tail:
    """Reads a pipe to its end in a thread, keeping its last _STDERR_TAIL_BYTES and a count."""

    def __init__(self, fd):
        self.fd = fd
        self.kept = bytearray()
        self.total = 0
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while not self.stop:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.total += len(chunk)
            self.kept += chunk
            if len(self.kept) > _STDERR_TAIL_BYTES:
                del self.kept[: len(self.kept) - _STDERR_TAIL_BYTES]

    def finish(self):
        """The tail, once the pipe ended (or after a short wait: a process that escaped
        containment may hold it open)."""
        self.thread.join(timeout=1.0)
        self.stop = True
        self.thread.join()
        os.close(self.fd)
        return bytes(self.kept).decode("utf-8", "replace")


def _start(request, env, stderr_fd):
    """The command, in a session of its own."""
    return subprocess.Popen(
        request["argv"],
        env=env,
        cwd=request.get("cwd"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr_fd,
        start_new_session=True,
    )


def run(request):
    timed_out = []
    env = request.get("env")
    if env is not None and _TOKEN is not None:
        env = dict(env, **{process_tree.CONTAINER_VARIABLE: _TOKEN})
    read_fd, write_fd = os.pipe()
    tail_reader = _Tail(read_fd)
    start_ns = perf_counter_ns()
    try:
        proc = _start(request, env, write_fd)
    except OSError as error:
        os.close(write_fd)
        tail_reader.finish()
        return {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    os.close(write_fd)
    timer = threading.Timer(
        float(request.get("timeout_s", 60.0)),
        lambda: (timed_out.append(True), _kill_group(proc.pid)),
    )
    timer.start()
    exited = _wait_exited(proc.pid)
    wall_ns = perf_counter_ns() - start_ns
    queued = _run_queue_ns(proc.pid) if exited else None
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    left = process_tree.stop(proc.pid, _TOKEN, adopted_by=os.getpid(), since_ticks=_SINCE_TICKS)
    tail = tail_reader.finish()
    return {
        "ok": True,
        "wall_ns": wall_ns,
        "returncode": proc.returncode,
        "timed_out": bool(timed_out),
        "user_ns": int(usage.ru_utime * 1e9),
        "sys_ns": int(usage.ru_stime * 1e9),
        "maxrss_kb": usage.ru_maxrss,
        "cpu": _current_cpu(),
        "stderr_tail": tail,
        "stderr_bytes": tail_reader.total,
        "left": left,
        "nivcsw": usage.ru_nivcsw,
        "run_queue_ns": queued,
    }


def main():
    process_tree.become_subreaper()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "quit":
            return
        sys.stdout.write(json.dumps(run(request)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
