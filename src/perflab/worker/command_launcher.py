"""perflab command launcher: runs whole commands and times them (stdlib only).

The parent starts it pinned to the measuring CPU, so the commands it starts inherit the pinning
without a fork-time hook, and their wall time is taken next to the process, not across a pipe.

Request:  {"op": "run", "argv": [...], "env": {...}, "cwd": str|null, "timeout_s": float}
Reply:    {"ok": true, "wall_ns", "returncode", "timed_out", "user_ns", "sys_ns", "maxrss_kb",
           "cpu", "stderr_tail", "stderr_bytes", "left", "nivcsw", "run_queue_ns",
           "leader_cpu_ns", "launcher_cpu_ns"}
          (failures to start: {"ok": false, "error": text})
nivcsw: involuntary context switches (wait4's rusage: the command and the children it waited
for); run_queue_ns and leader_cpu_ns: the time the command's process (its first thread) waited
runnable on a run queue and the time it ran, read from its /proc/PID/schedstat after it exited
and before it is reaped (null where unavailable); launcher_cpu_ns: the CPU time this launcher
used on the measuring CPU from just before it started the command until the command exited
(its process CPU clock).

The command shares its CPU with this launcher, which must not pass for another process taking
it: the launcher runs one thread, starts the command with posix_spawn (no Python between fork
and exec) and then sleeps in one poll until the command exits, its stderr has bytes or the
timeout passes; what it ran meanwhile is reported so that the parent can take it out of the
command's wait.

Each command runs in its own session with the launcher's container token in its environment; the
launcher is a child subreaper. When the command ends, whatever it left running is killed and
counted ("left"), so no run of a command outlives its sample.

The command's stderr goes through a pipe of which only the last bytes are kept (and all counted,
"stderr_bytes"): nothing is written to disk, and memory stays bounded whatever it writes.
"""

import errno
import json
import os
import select
import signal
import sys
from time import perf_counter_ns, process_time_ns

import process_tree  # next to this script; perflab.worker.process_tree

_TOKEN = os.environ.get(process_tree.CONTAINER_VARIABLE)
_SINCE_TICKS = process_tree.start_ticks(os.getpid())  # what the commands start is younger
_HOME = os.getcwd()

# a command's stderr kept for its error: the end says what failed, and a chatty command cannot fill
# memory
_STDERR_TAIL_BYTES = 4000
_DRAIN_S = 1.0  # after the command exited, how long its stderr may stay open (an escaped child)


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


def _schedstat(pid):
    """(time run, time waited on a run queue) of the process's first thread, or None."""
    try:
        with open("/proc/%d/schedstat" % pid, "rb") as stat:
            fields = stat.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


class _Tail:
    """The last _STDERR_TAIL_BYTES read from a pipe, and a count of all."""

    def __init__(self, fd):
        self.fd = fd
        self.kept = bytearray()
        self.total = 0
        self.open = True

    def read(self):
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.open = False
            return
        self.total += len(chunk)
        self.kept += chunk
        if len(self.kept) > _STDERR_TAIL_BYTES:
            del self.kept[: len(self.kept) - _STDERR_TAIL_BYTES]

    def finish(self):
        """The tail, once the pipe ended (or after a short wait: a process that escaped
        containment may hold it open)."""
        deadline = perf_counter_ns() + int(_DRAIN_S * 1e9)
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while self.open:
            left_ms = (deadline - perf_counter_ns()) // 1_000_000
            if left_ms <= 0 or not poller.poll(left_ms):
                break
            self.read()
        os.close(self.fd)
        return bytes(self.kept).decode("utf-8", "replace")


class _ExitSignal:
    """Wakes a poll when a child of the launcher changes state (SIGCHLD through a pipe)."""

    def __init__(self):
        self.read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # SIG_DFL would discard it

    def drain(self):
        try:
            while os.read(self.read_fd, 512):
                pass
        except BlockingIOError:
            pass


def _exited(pid):
    """Whether the command exited, without reaping it (its /proc entry, a zombie's, still holds
    its scheduler totals)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _executable(name, env):
    """Where the command's program is, found as exec would find it on the command's PATH."""
    if "/" in name:
        return name
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)


def _start(request, env, stderr_fd):
    """The command, in a session of its own, its stdin and stdout /dev/null: (its pid, this
    launcher's CPU clock right before it started it)."""
    cwd = request.get("cwd")
    if cwd:
        os.chdir(cwd)  # posix_spawn has no working directory of its own; the launcher lends it
    try:
        argv = request["argv"]
        executable = _executable(argv[0], env)
        output_fds = request.get("output_fds")
        # --show-output: perflab's own stdout and stderr (passed to this launcher); else
        # stdout is discarded and stderr goes to the tail kept for error messages
        out_fd, err_fd = output_fds if output_fds else (None, stderr_fd)
        file_actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)
            if out_fd is None
            else (os.POSIX_SPAWN_DUP2, out_fd, 1),
            (os.POSIX_SPAWN_DUP2, err_fd, 2),
        ]
        before_ns = process_time_ns()
        pid = os.posix_spawn(
            executable,
            argv,
            env,
            file_actions=file_actions,
            setsid=True,
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),  # as Popen restores them
        )
        return pid, before_ns
    finally:
        if cwd:
            os.chdir(_HOME)


def _poller(tail, exit_signal):
    """What _wait sleeps on, made before the command starts (less to run beside it)."""
    poller = select.poll()
    poller.register(exit_signal.read_fd, select.POLLIN)
    poller.register(tail.fd, select.POLLIN)
    return poller


def _wait(pid, tail, exit_signal, poller, deadline_ns, awake_since_ns):
    """Sleep until the command exits, reading its stderr as it comes; kill it at the timeout.
    (Whether it timed out, the CPU time this launcher ran from `awake_since_ns` while the
    command lived, when it woke to find it gone.) The count starts before the spawn: the
    launcher's return from it, which the command waits for at its exec, cannot be told apart
    from the fork before it, so both count (the wait left is then a looser lower bound). The
    time awake after the wake-up that finds the command gone does not count: it ran alone, on
    caches the command left cold, which is not the command's cost."""
    timed_out = False
    launcher_cpu_ns = 0
    woke_ns = perf_counter_ns()
    while not _exited(pid):
        launcher_cpu_ns += process_time_ns() - awake_since_ns
        left_ms = None if timed_out else max(0, (deadline_ns - perf_counter_ns()) // 1_000_000)
        ready = {fd for fd, _ in poller.poll(left_ms)}
        woke_ns = perf_counter_ns()
        awake_since_ns = process_time_ns()
        if not ready and not timed_out:
            timed_out = True
            _kill_group(pid)
        if exit_signal.read_fd in ready:
            exit_signal.drain()
        if tail.fd in ready:
            tail.read()
            if not tail.open:
                poller.unregister(tail.fd)
    return timed_out, launcher_cpu_ns, woke_ns


def run_requested_command(request, exit_signal):
    """Runs one requested command and replies with its wall and CPU times, exit status and stderr's
    tail."""
    env = request.get("env")
    env = dict(os.environ) if env is None else dict(env)
    if _TOKEN is not None:
        env[process_tree.CONTAINER_VARIABLE] = _TOKEN
    read_fd, write_fd = os.pipe()  # both ends close on exec; the command gets a copy
    os.set_blocking(read_fd, False)  # only this end: the command's writes block as usual
    tail = _Tail(read_fd)
    exit_signal.drain()  # what the last command's leftovers signalled
    poller = _poller(tail, exit_signal)
    start_ns = perf_counter_ns()
    deadline_ns = start_ns + int(float(request.get("timeout_s", 60.0)) * 1e9)
    try:
        pid, awake_since_ns = _start(request, env, write_fd)
    except OSError as error:
        os.close(write_fd)
        tail.finish()
        return {"ok": False, "error": "%s: %s" % (type(error).__name__, error)}
    os.close(write_fd)
    timed_out, launcher_cpu_ns, ended_ns = _wait(
        pid, tail, exit_signal, poller, deadline_ns, awake_since_ns
    )
    wall_ns = ended_ns - start_ns
    leader = _schedstat(pid)
    _, status, usage = os.wait4(pid, 0)
    ours = process_tree.Container(pid, _TOKEN, adopted_by=os.getpid(), since_ticks=_SINCE_TICKS)
    left = ours.stop()
    return {
        "ok": True,
        "wall_ns": wall_ns,
        "returncode": os.waitstatus_to_exitcode(status),
        "timed_out": timed_out,
        "user_ns": int(usage.ru_utime * 1e9),
        "sys_ns": int(usage.ru_stime * 1e9),
        "maxrss_kb": usage.ru_maxrss,
        "cpu": _current_cpu(),
        "stderr_tail": tail.finish(),
        "stderr_bytes": tail.total,
        "left": left,
        "nivcsw": usage.ru_nivcsw,
        "run_queue_ns": None if leader is None else leader[1],
        "leader_cpu_ns": None if leader is None else leader[0],
        "launcher_cpu_ns": launcher_cpu_ns,
    }


def main():
    process_tree.become_subreaper()
    exit_signal = _ExitSignal()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "quit":
            return
        sys.stdout.write(json.dumps(run_requested_command(request, exit_signal)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
