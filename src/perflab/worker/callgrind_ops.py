"""Statement-worker ops for counting under callgrind (measure/callgrind/count.py: the instructions
and memory lenses), sent to each worker started under callgrind.

Runs inside the variant's interpreter: Python 3.7+, standard library only. The worker switches
callgrind's instrumentation on and off around the counted loop itself, and asks for the dump,
with valgrind's client requests, the way callgrind.h's CALLGRIND_START_INSTRUMENTATION does: a
few bytes of x86-64 machine code (the "special instruction" sequence valgrind recognises, a no-op
on a real CPU) placed in an executable page and called through ctypes. Nothing is compiled. The
parent's alternative, vgdb, interrupts the worker with ptrace for each switch: ~0.15 s a call,
two per counted loop, the larger part of what counting costs.

  {"op": "callgrind_probe"}  -> {"ok": true, "requests": true}
                                or {"ok": true, "requests": false, "why": text}
     whether client requests reach valgrind from this process (x86-64, ctypes, an executable
     page allowed, and the process running under valgrind).
  {"op": "callgrind_sample", "loops": N, "empty": false, "dump": HINT, "dry": false,
   "collect": false}        -> {"ok": true}
     instrumentation on, the loop (untimed, as "sample" with "timed": false), instrumentation
     off, then a dump whose trigger ends with HINT. What runs between the switches is the same
     for the statement's loop and the empty one (whose counts are subtracted). "dry": true runs
     the same code with each request replaced by RUNNING_ON_VALGRIND (a warm-up). "collect":
     true toggles collection instead (after callgrind_collect_only), leaving instrumentation on.
  {"op": "callgrind_collect_only"} -> {"ok": true, "toggled": true}
                                     or {"ok": true, "toggled": false, "why": text}
     instrumentation on for the rest of the process, collection off and the costs zeroed:
     callgrind throws away every translation whenever instrumentation is switched, not when
     collection is toggled, so a loop counted this way does not translate its code again.
     Collection is a state of the thread that toggles it, so a process running other threads
     is refused (their work would not be counted): it switches instrumentation as before.
  {"op": "callgrind_threads"} -> {"ok": true, "threads": N, "started": K}
     the process's threads (/proc/self/task), and the Python threads started since
     callgrind_collect_only (threading's profile hook, which runs first in each new thread:
     one that ended before this call is not in /proc): a thread started after
     callgrind_collect_only would have counted nowhere.
  {"op": "callgrind_discard"} -> {"ok": true, "requests": true}
                                or {"ok": true, "requests": false, "why": text}
     as callgrind_probe, then instrumentation on and off at once and the costs zeroed: callgrind
     throws away every translation when instrumentation is switched, the most at the first
     switch after a large import. A fork server does it once before it forks, so that its
     children do not each pay it in their first counted loop.
"""

import mmap
import os
import platform
import sys

# valgrind.h's special instruction sequence for amd64, as a function of (args, default):
# rax <- args, rdx <- default, the four rotations of rdi (by 128 bits in all: rdi unchanged)
# and `xchg rbx, rbx` ask valgrind to serve the request at rax and leave its result in rdx.
_CLIENT_REQUEST_AMD64 = bytes.fromhex(
    "4889f8"  # mov rax, rdi
    "4889f2"  # mov rdx, rsi
    "48c1c703"  # rol rdi, 3
    "48c1c70d"  # rol rdi, 13
    "48c1c73d"  # rol rdi, 61
    "48c1c733"  # rol rdi, 51
    "4887db"  # xchg rbx, rbx
    "4889d0"  # mov rax, rdx
    "c3"  # ret
)
_RUNNING_ON_VALGRIND = 0x1001  # valgrind.h: VG_USERREQ__RUNNING_ON_VALGRIND
# callgrind.h: VG_USERREQ_TOOL_BASE('C', 'T') and the requests that follow it
_CALLGRIND_BASE = (ord("C") << 24) | (ord("T") << 16)
_DUMP_STATS_AT = _CALLGRIND_BASE + 3
_START_INSTRUMENTATION = _CALLGRIND_BASE + 4
_STOP_INSTRUMENTATION = _CALLGRIND_BASE + 5
_ZERO_STATS = _CALLGRIND_BASE + 1
_TOGGLE_COLLECT = _CALLGRIND_BASE + 2

_DONE = {"ok": True}
_state = {}  # "request": the callable, "page": the mmap it lives in (kept alive)


def _no_clock():
    return 0


def _client_request_function():
    """A callable request(args_address, default) -> result, or a reason it cannot be made."""
    if platform.machine().lower() not in ("x86_64", "amd64") or sys.maxsize < 2**32:
        return None, "client requests are built for x86-64 only, not %s" % platform.machine()
    try:
        import ctypes
    except ImportError:
        return None, "this Python has no ctypes"
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError, TypeError, AttributeError) as error:
        return None, "an executable page is not allowed here (%s)" % error
    page.write(_CLIENT_REQUEST_AMD64)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    prototype = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t)
    _state["page"] = page
    return prototype(address), None


def _arguments(code, first=0):
    """A request's argument block (the request and five words): the caller holds it in a name
    while valgrind reads it (a temporary's address was freed before the request ran once)."""
    import ctypes

    return (ctypes.c_size_t * 6)(code, first, 0, 0, 0, 0)


def callgrind_probe(worker, request):
    """The `callgrind_probe` op: whether valgrind's client requests reach callgrind from this
    worker; if so, their argument blocks are made once."""
    call, why = _client_request_function()
    if call is None:
        return {"ok": True, "requests": False, "why": why}
    import ctypes

    running = _arguments(_RUNNING_ON_VALGRIND)
    if call(ctypes.addressof(running), 0) == 0:
        return {"ok": True, "requests": False, "why": "the worker is not running under valgrind"}
    _state["request"] = call
    # the argument blocks live as long as the worker: nothing is allocated around a count
    _state["start"] = _arguments(_START_INSTRUMENTATION)
    _state["stop"] = _arguments(_STOP_INSTRUMENTATION)
    _state["toggle"] = _arguments(_TOGGLE_COLLECT)
    _state["noop"] = running
    _state["noop_at"] = ctypes.addressof(running)
    _state["start_at"] = ctypes.addressof(_state["start"])
    _state["stop_at"] = ctypes.addressof(_state["stop"])
    _state["toggle_at"] = ctypes.addressof(_state["toggle"])
    return {"ok": True, "requests": True}


def callgrind_sample(worker, request):
    """The `callgrind_sample` op: instrumentation (or collection) on, the loop, off, then a dump; a
    dry run makes harmless requests instead, as a warm-up."""
    call = _state.get("request")
    if call is None:
        return {"ok": False, "phase": "protocol", "error": "callgrind_probe found no requests"}
    import ctypes

    loops = int(request["loops"])
    empty = bool(request.get("empty", False))
    hint = ctypes.create_string_buffer(str(request["dump"]).encode())
    dump = _arguments(_DUMP_STATS_AT, ctypes.addressof(hint))
    if request.get("dry"):
        # a warm-up: the same code, each request replaced by a harmless one, so CPython has
        # specialised it before anything is counted
        start_at = stop_at = dump_at = _state["noop_at"]
    elif request.get("collect"):
        start_at = stop_at = _state["toggle_at"]
        dump_at = ctypes.addressof(dump)
    else:
        start_at, stop_at = _state["start_at"], _state["stop_at"]
        dump_at = ctypes.addressof(dump)
    call(start_at, 0)
    try:
        worker.timed(loops, empty, _no_clock)
    except BaseException:
        call(stop_at, 0)
        return {"ok": False, "phase": "stmt", "error": worker.traceback()}
    call(stop_at, 0)
    call(dump_at, 0)
    return _DONE


def callgrind_discard(worker, request):
    """The `callgrind_discard` op: as callgrind_probe, then instrumentation on and off at once and
    the costs zeroed, so a fork server's children do not each pay the first switch."""
    probe = callgrind_probe(worker, request)
    if not probe.get("requests"):
        return probe
    # the thread-start watch is made here too, before any fork, so that a child that toggles
    # collection starts from the state one that switches does: made in the child alone, it
    # changes the child's count
    _watch_thread_starts()
    # the few instructions between the switches: counted nowhere (the children inherit zeros)
    _requests_then_zero(_state["start_at"], _state["stop_at"])
    return probe


def _watch_thread_starts():
    """Every Python thread started from now on says so once (its first event), then runs
    unprofiled: not counted in a toggling worker's own thread either way."""
    import threading

    _state["thread_starts"] = 0
    threading.setprofile(_thread_started)


def _requests_then_zero(*requests):
    """The client requests at these argument blocks, in turn, then the costs zeroed."""
    import ctypes

    call = _state["request"]
    zero = _arguments(_ZERO_STATS)
    for at in requests:
        call(at, 0)
    call(ctypes.addressof(zero), 0)


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: treated as other threads running


def callgrind_collect_only(worker, request):
    """The `callgrind_collect_only` op: instrumentation on for the rest of the process and
    collection toggled off, so loops do not translate their code again; refused when other threads
    run."""
    if _state.get("request") is None:
        return {"ok": False, "phase": "protocol", "error": "callgrind_probe found no requests"}
    threads = _threads()
    if threads != 1:
        why = "%d threads" % threads if threads else "its threads are unknown (no /proc)"
        return {"ok": True, "toggled": False, "why": "the process runs %s" % why}
    _watch_thread_starts()
    # collection starts on (--collect-atstart=yes, as the switched way needs): off at once, and
    # the few instructions before that zeroed
    _requests_then_zero(_state["start_at"], _state["toggle_at"])
    return {"ok": True, "toggled": True}


def _thread_started(frame, event, arg):
    _state["thread_starts"] = _state.get("thread_starts", 0) + 1
    sys.setprofile(None)


def callgrind_threads(worker, request):
    return {"ok": True, "threads": _threads(), "started": _state.get("thread_starts", 0)}


OPS = {
    "callgrind_probe": callgrind_probe,
    "callgrind_sample": callgrind_sample,
    "callgrind_discard": callgrind_discard,
    "callgrind_collect_only": callgrind_collect_only,
    "callgrind_threads": callgrind_threads,
}

if __name__ == "__main__":
    # run natively by the parent before counting (python worker_ops.py): why client requests
    # cannot be made in this interpreter and environment, or nothing when they can
    sys.stdout.write(_client_request_function()[1] or "")
