"""The peak-memory statement-worker op (measure/peak_memory/sessions.py: the rss and memory
lenses), sent to each worker measuring peak memory ("register").

Runs inside the variant's interpreter: Python 3.7+, standard library only.

  {"op": "rss_sample", "loops": N}  -> {"ok": true, "loops", "maxrss_kb", "peak_alloc_bytes",
                                        "net_blocks"}
     runs the loop twice: once counting the memory blocks still allocated afterwards
     (sys.getallocatedblocks, after a collection, so what the loop keeps: a leak grows it), once
     under tracemalloc for the peak of memory allocated while it ran, above what was allocated
     before. "maxrss_kb" is the process's peak resident set size so far: VmHWM of
     /proc/self/status, which starts afresh at exec (getrusage's ru_maxrss does not: it keeps
     the peak of the process perflab forked the worker from); ru_maxrss where there is no /proc.
"""

import gc
import sys
import tracemalloc

try:
    import resource
except ImportError:  # pragma: no cover - non-POSIX
    resource = None


def _peak_rss_kb():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else None


def rss_sample(worker, request):
    """The `rss_sample` op: the loop run plain (net allocated blocks) and under tracemalloc (peak
    allocated bytes), and the process's peak RSS."""
    loops = int(request["loops"])
    try:
        gc.collect()
        blocks_before = sys.getallocatedblocks()
        worker.timed(loops)
        gc.collect()
        net_blocks = sys.getallocatedblocks() - blocks_before
        tracemalloc.start()
        try:
            start_bytes, _ = tracemalloc.get_traced_memory()
            worker.timed(loops)
            _, peak_bytes = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    except BaseException:
        return {"ok": False, "phase": "stmt", "error": worker.traceback()}
    maxrss_kb = _peak_rss_kb()
    return {
        "ok": True,
        "loops": loops,
        "maxrss_kb": maxrss_kb,
        "peak_alloc_bytes": max(0, peak_bytes - start_bytes),
        "net_blocks": net_blocks,
    }


OPS = {"rss_sample": rss_sample}
