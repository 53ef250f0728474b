"""The statement worker's CPU: where it runs (and pinning it there), and what is read right around
a timed loop: its CPU time, its involuntary switches and its wait on a run queue. Standard
library only, Python 3.7+: it runs in the variant's interpreter, next to statement_worker.py."""

import os
import time

try:
    import resource
except ImportError:  # pragma: no cover - non-POSIX
    resource = None


def current_cpu():
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[36])  # field 39 "processor"; fields start after "pid (comm)"
    except (OSError, IndexError, ValueError):
        return None


def involuntary_switches():
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw


def _schedstat_path():
    # whether the file is there, never what it says: its length follows how long this process
    # has run, and read here, at import, it left a fork server's heap (which every child
    # inherits) in one of two states by the time the server took to start
    # (bench/results/asv_aa_2026-11-30.md); a reading that cannot be parsed is None anyway
    for path in ("/proc/thread-self/schedstat", "/proc/self/schedstat"):
        if os.path.exists(path):
            return path
    return None


_SCHEDSTAT = _schedstat_path()


def read_run_queue_ns():
    """Nanoseconds this thread has waited on a run queue so far (schedstat's second field)."""
    if _SCHEDSTAT is None:
        return None
    try:
        with open(_SCHEDSTAT, "rb") as stat:
            return int(stat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def read_thread_time_ns():
    try:
        return time.thread_time_ns()
    except (AttributeError, OSError):  # pragma: no cover - platforms without a thread clock
        return None


def read_process_time_ns():
    try:
        return time.process_time_ns()
    except (AttributeError, OSError):  # pragma: no cover - platforms without a process clock
        return None


def no_clock():
    return 0


def unpreempted_ns(wall_ns, cpu_ns, run_queue_ns):
    """wall_ns less the time other processes took (perflab.stats.preemption.lost_ns)."""
    if run_queue_ns is None or run_queue_ns <= 0:
        return wall_ns
    off_cpu = wall_ns if cpu_ns is None else max(0, wall_ns - cpu_ns)
    return wall_ns - min(run_queue_ns, off_cpu)


def accounted(timed, loops, empty=False):
    """timed(loops, empty), with the thread's CPU time and run-queue wait read right around it:
    (wall_ns, cpu_ns, run_queue_ns), the last two None where unavailable. The thread
    waits on the run queue while another thread of this process runs on its CPU too: that
    is the statement's own work, not another process's turn, and comes off the wait."""
    queued_before = read_run_queue_ns()
    process_before = read_process_time_ns()
    cpu_before = read_thread_time_ns()
    wall_ns = timed(loops, empty)
    cpu_after = read_thread_time_ns()
    process_after = read_process_time_ns()
    queued_after = read_run_queue_ns()
    cpu_ns = queued = None
    if cpu_before is not None and cpu_after is not None:
        cpu_ns = cpu_after - cpu_before
    if queued_before is not None and queued_after is not None:
        queued = queued_after - queued_before
        if cpu_ns is not None and process_before is not None and process_after is not None:
            other_threads_ns = max(0, process_after - process_before - cpu_ns)
            queued = max(0, queued - other_threads_ns)
    return wall_ns, cpu_ns, queued


def pin(cpu):
    """Move every thread of this process onto CPU `cpu` (AttributeError or OSError where the
    platform cannot)."""
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for thread in threads:
        try:
            os.sched_setaffinity(thread, {cpu})
        except ProcessLookupError:
            pass  # a thread that ended meanwhile
