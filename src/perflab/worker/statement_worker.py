"""perflab statement worker: runs inside the variant's own interpreter (Python 3.7+, stdlib only).
It is started by path in an interpreter that has no perflab installed: its own modules are its
siblings in this folder (statement_loop, statement_cpu, statement_values, statement_fork,
statement_copies, process_tree), each standard library only.

It speaks JSON lines with the parent over its original stdout/stdin, kept on private file
descriptors that the processes a benchmark starts do not inherit, and that a process its code
forks sees as /dev/null (a copy never answers: statement_copies). The benchmark's own output on
stdout is redirected to stderr so it cannot corrupt the protocol; its stdin is /dev/null.

The worker's first line is {"hello": "perflab-worker", "protocol": 1}. Then, requests (one JSON
object per line) and replies:
  {"op": "setup", "stmt": S, "setup": S,
   "scope": "function"|"module"}                   -> {"ok": true, "pid", "python", "executable"}
     function scope (default): the loop is a function whose globals are the setup's names, as
     timeit's; module scope: the loop is top-level code, as torch's collect_callgrind runs it.
  {"op": "check"}                                  -> {"ok": true, "wall_ns": N,
                                                        "device_synchronised": "cuda"|null,
                                                        "device_runtimes": [names]}
     one iteration. Where the process has initialised CUDA through torch (the set-up or the
     statement did), every timed loop synchronises the device before each clock reading, so
     a sample ends when the work it launched is done; "device_synchronised" says so.
     "device_runtimes", the GPU runtimes the set-up and statement initialised: a server that
     ran them (a lens's warm-up) could not fork
  {"op": "calibrate", "target_ns": N}              -> {"ok": true, "loops": N, "wall_ns": N}
  {"op": "sample", "loops": N, "empty": false,
   "handshake": false}                             -> {"ok": true, "wall_ns", "cpu", "nivcsw",
                                                        "cpu_ns", "run_queue_ns"}
     read right around the timed loop: nivcsw, involuntary context switches (getrusage);
     cpu_ns, the thread's CPU time; run_queue_ns, the time it waited on a run queue, runnable
     but not running (/proc/thread-self/schedstat), less the CPU time the worker's other
     threads ran meanwhile (the statement's own threads are the benchmark): time another
     process took from the measuring CPU. Each is null where the platform does not provide it.
     with "handshake": true the worker first replies {"ready": true} and waits for {"op": "go"}
     before the timed loop; right after it, it writes {"done": true} and waits for {"op": "end"}
     before replying, so the parent can switch a tool on around the measured region only.
     with "timed": false nothing is timed or read around the loop (its clock always reads 0)
     and the reply is always the same, {"ok": true, "wall_ns": 0, the rest null}: what the
     process allocates then never depends on time (instruction counts do, through the
     allocators' state, when numbers of varying size are read and encoded between samples).
  {"op": "evaluate", "expr": E}                   -> {"ok": true, "value": encoded value}
     evaluates E in the setup's namespace (--check); the value is encoded for comparison across
     variants: {"kind": "exact", "type", "text"} (ints, strings, bytes, repr), {"kind": "array",
     "type", "shape", "values"} (floats, NumPy arrays, tensors, lists of numbers), with "digest"
     and a strided part of "values" (every "stride"-th) when it is large. A value that cannot
     be compared (its repr is its address) replies {"ok": false, "uncomparable": true, ...}.
  {"op": "register", "name": N, "source": S}     -> {"ok": true, "ops": [names]}
     a lens's own ops: S is Python source (standard library only, Python 3.7+) defining
     OPS = {op name: handler}; handler(worker, request) returns the reply. Handlers use
     worker.timed(loops), worker.reply/read_request (for handshakes) and worker.traceback().
     Later requests with those op names go to the handlers (e.g. the torch lens's
     "torch_profile", in perflab/lenses/torch/worker_ops.py).
  {"op": "pin", "cpu": N}                        -> {"ok": true, "cpu": N}
     moves every thread of the worker onto CPU N (a worker started on other CPUs while the
     previous generation measured)
  {"op": "preload", "setup": S}                  -> {"ok": true, "modules": [names], "wall_ns",
                                                        "device_runtimes": [names], "threads": N,
                                                        "cpu_ns": N}
     a fork server: imports the setup's top-level modules (its import statements only), so
     the children it forks start with them loaded; a module those statements bind that
     defines perflab_preload(setup) is then called with S, to do once what every child's
     set-up would repeat (the set-up must work without it: fresh workers never call it);
     "device_runtimes", the GPU runtimes the imports initialised ("cuda" ...): a server with
     any must not fork (its children's first use of the device fails), and "fork" then fails
     with phase "fork"; "threads", the server's OS threads after the imports (0: unknown);
     "cpu_ns", the CPU time the process has used since it started (under valgrind: valgrind's
     own start and translations too), which a busy machine does not inflate as it does walls
  {"op": "fork", "env": {K: V}, "padding": N, "ahead": K}
                                                   -> the child writes a hello line and serves
     this protocol on the same channel until quit; then the server replies
     {"ok": true, "exited": status}. The child moves its heap by N bytes and its stack by a
     depth derived from N (fork keeps ASLR and the hash seed; the padding varies the rest).
     "ahead": K (default 0) also forks K children at the same moment, which wait: the next K
     "fork" requests release them in turn instead of forking, so all start from one state.
  {"op": "quit"}                                   -> {"ok": true, "left": N}, then exits
     runs the atexit functions, then stops what the set-up or statement started and left
     running (the worker is their child subreaper, so daemons that left its session are
     among them: SIGTERM, a short grace, SIGKILL), N of them, replies and leaves without the
     interpreter's teardown; with another non-daemon thread still running it exits as usual
     and stops them and replies once that thread ended. A forked child does the same for its
     own descendants, with the atexit functions its own set-up registered (those it inherited
     are the server's, and run in the server).
Failures reply {"ok": false, "phase": "setup"|"stmt"|"check"|"protocol"|"register"|a lens's phase,
"error": traceback text}.
"""

import atexit
import faulthandler
import gc
import itertools
import json
import os
import sys
import traceback
from time import perf_counter_ns, process_time_ns

try:  # next to this script, which runs as a script in the variant's Python
    import process_tree
    import statement_copies
    import statement_cpu
    import statement_fork
    import statement_loop
    import statement_values
except ImportError:  # imported as perflab.worker.statement_worker (perflab's own tests)
    from perflab.worker import (
        process_tree,
        statement_copies,
        statement_cpu,
        statement_fork,
        statement_loop,
        statement_values,
    )

# the worker's own frames, left out of the tracebacks it sends: the user's code is what matters
_OWN_FILES = frozenset(
    os.path.abspath(path)
    for path in (
        __file__,
        statement_copies.__file__,
        statement_cpu.__file__,
        statement_fork.__file__,
        statement_loop.__file__,
        statement_values.__file__,
    )
)


def _user_traceback():
    """The current exception's traceback without this worker's own frames: the user's code
    (<setup>, <stmt>, <perflab-loop>) and the libraries it called."""
    error_type, error, trace = sys.exc_info()
    frames = [
        f for f in traceback.extract_tb(trace) if os.path.abspath(f.filename) not in _OWN_FILES
    ]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(error_type, error)
    return "".join(lines)


_UNTIMED_REPLY = {
    "ok": True,
    "wall_ns": 0,
    "cpu": None,
    "nivcsw": None,
    "cpu_ns": None,
    "run_queue_ns": None,
}


class Worker:
    """The worker's side of the protocol: reads requests, runs the ops that answer them, and keeps
    the benchmark's loops and names."""

    def __init__(self, reply_stream, request_stream, channel=()):
        """`channel`: the descriptors under the streams, which no copy of this process that
        the benchmark's code forks keeps (statement_copies.CopyAlarm)."""
        self.reply_stream = reply_stream
        self.request_stream = request_stream
        self.loop = None
        self.empty_loop = None
        # op name -> handler(worker, request) -> reply: the protocol's own, and the lenses' ops
        # as they register theirs
        self.ops = dict(_BUILT_IN_OPS)
        self.namespace = None  # the setup's names, where --check expressions are evaluated
        self.heap_padding = None  # a forked child's: moves its later allocations
        self.forks = statement_fork.ForkServerProcess(self)
        self.quit_asked = False  # the parent said quit (rather than closing the channel)
        self.copies = statement_copies.CopyAlarm(channel)  # of itself the measured code forked

    def traceback(self):
        """The current exception's traceback without the worker's own frames."""
        return _user_traceback()

    def device_runtimes(self):
        """The GPU runtimes this process has initialised (for a lens op's reply)."""
        return statement_loop.device_runtimes()

    def register(self, request):
        namespace = {"__name__": "perflab_ops_%s" % request.get("name", "lens")}
        try:
            exec(compile(request["source"], "<%s ops>" % request.get("name"), "exec"), namespace)
            ops = dict(namespace["OPS"])
        except BaseException:
            return {"ok": False, "phase": "register", "error": traceback.format_exc()}
        # a lens's op never replaces one of the protocol's own
        self.ops.update(
            (name, _lens_op(op)) for name, op in ops.items() if name not in _BUILT_IN_OPS
        )
        return {"ok": True, "ops": sorted(ops)}

    def reply(self, message):
        # a copy the code forked that got here by a way no other check saw never answers
        self.copies.leave_if_a_copy("benchmark's code")
        self.reply_stream.write(json.dumps(message) + "\n")
        self.reply_stream.flush()

    def read_request(self):
        line = self.request_stream.readline()
        if not line:
            return None
        return json.loads(line)

    def setup(self, request):
        namespace = {"__name__": "__perflab__"}
        self.namespace = namespace
        before = statement_copies.children()
        try:
            exec(compile(request.get("setup") or "pass", "<setup>", "exec"), namespace)
        except BaseException:
            self.copies.leave_if_a_copy("set-up")
            return {"ok": False, "phase": "setup", "error": _user_traceback()}
        self.copies.leave_if_a_copy("set-up")
        # waited for as the statement's are: the set-up's own reply names a copy that comes
        # back shortly (a later request's would be late, or none if the worker quits first)
        forked = self.copies.came_back(before)
        if forked is not None:
            return forked
        try:
            scope = request.get("scope", "function")
            self.loop = statement_loop.compile_loop(request["stmt"], namespace, scope)
            self.empty_loop = statement_loop.compile_loop("pass", dict(namespace), scope)
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}
        return {
            "ok": True,
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "implementation": sys.implementation.name,
            "executable": sys.executable,
        }

    def check(self):
        """Run the statement once: fail early (before calibrating), warm caches."""
        before = statement_copies.children()
        try:
            wall_ns = self.timed(1)
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}
        forked = self.copies.came_back(before)
        if forked is not None:
            return forked
        synchronised = "cuda" if statement_loop.device_synchroniser() is not None else None
        return {
            "ok": True,
            "wall_ns": wall_ns,
            "device_synchronised": synchronised,
            "device_runtimes": statement_loop.device_runtimes(),
        }

    def evaluate(self, request):
        """The value of a --check expression in the setup's namespace, encoded."""
        before = statement_copies.children()
        try:
            code = compile(request["expr"], "<check>", "eval")
            value = eval(code, self.namespace if self.namespace is not None else {})
        except BaseException:
            return {"ok": False, "phase": "check", "error": _user_traceback()}
        finally:
            self.copies.leave_if_a_copy("--check expression")
        forked = self.copies.came_back(before)
        if forked is not None:
            return forked
        try:
            return {"ok": True, "value": statement_values.encode_value(value)}
        except statement_values.Uncomparable as error:
            return {"ok": False, "phase": "check", "error": str(error), "uncomparable": True}
        except BaseException:
            return {"ok": False, "phase": "check", "error": _user_traceback()}

    def timed(self, loops, empty=False, timer=perf_counter_ns):
        loop = self.empty_loop if empty else self.loop
        synchronise = statement_loop.device_synchroniser()
        if synchronise is not None:
            timer = statement_loop.synchronised(timer, synchronise)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # as timeit does: a collection inside one sample is noise, not signal
        try:
            return loop(itertools.repeat(None, loops), timer)
        finally:
            self.copies.leave_if_a_copy("statement")
            if gc_was_enabled:
                gc.enable()

    def accounted(self, loops, empty=False):
        """timed(), with the thread's CPU time and run-queue wait read right around it:
        (wall_ns, cpu_ns, run_queue_ns) (statement_cpu.accounted; for a lens's op too)."""
        return statement_cpu.accounted(self.timed, loops, empty)

    def calibrate(self, request):
        try:
            return self._calibrate(int(request["target_ns"]))
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}

    def _calibrate(self, target_ns):
        loops = 1
        while True:
            # time taken by other processes does not count: on a busy machine it would make
            # the loop count (and every sample's share of the statement) far too small
            wall_ns = statement_cpu.unpreempted_ns(*self.accounted(loops))
            forked = self.copies.came_back()
            if forked is not None:
                return forked
            if wall_ns >= target_ns or loops >= 1 << 40:
                break
            # grow towards the target, at most 10x per step so one slow outlier cannot overshoot
            factor = min(10.0, max(2.0, 1.2 * target_ns / max(wall_ns, 1)))
            loops = int(loops * factor) + 1
        return {"ok": True, "loops": loops, "wall_ns": wall_ns}

    def sample(self, request):
        loops = int(request["loops"])
        empty = bool(request.get("empty", False))
        if request.get("handshake"):
            self.reply({"ready": True})
            go = self.read_request()
            if go is None or go.get("op") != "go":
                return {"ok": False, "phase": "protocol", "error": "expected go, got %r" % (go,)}
        timed = request.get("timed", True)
        before = statement_cpu.involuntary_switches() if timed else None
        try:
            if timed:
                wall_ns, cpu_ns, queued = self.accounted(loops, empty)
            else:
                wall_ns, cpu_ns, queued = (
                    self.timed(loops, empty, statement_cpu.no_clock),
                    None,
                    None,
                )
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}
        forked = self.copies.came_back()
        if forked is not None:
            return forked
        if request.get("handshake"):
            # say "done" at once and wait, so the parent switches its tool off before this
            # process does anything else (reading /proc, encoding the reply ...)
            self.reply_stream.write('{"done": true}\n')
            self.reply_stream.flush()
            end = self.read_request()
            if end is None or end.get("op") != "end":
                return {"ok": False, "phase": "protocol", "error": "expected end, got %r" % (end,)}
        if not timed:
            return _UNTIMED_REPLY
        after = statement_cpu.involuntary_switches()
        return {
            "ok": True,
            "wall_ns": wall_ns,
            "cpu": statement_cpu.current_cpu(),
            "nivcsw": None if before is None else after - before,
            "cpu_ns": cpu_ns,
            "run_queue_ns": queued,
        }

    def pin(self, request):
        try:
            statement_cpu.pin(int(request["cpu"]))
        except (AttributeError, OSError):
            return {"ok": False, "phase": "protocol", "error": _user_traceback()}
        return {"ok": True, "cpu": statement_cpu.current_cpu()}

    def preload(self, request):
        """Import the setup's top-level modules once, for the children this process forks."""
        started = perf_counter_ns()
        before = statement_copies.children()
        try:
            names = statement_fork.preload_modules(request.get("setup") or "pass")
        except BaseException:
            return {"ok": False, "phase": "setup", "error": _user_traceback()}
        finally:
            self.copies.leave_if_a_copy("set-up")
        forked = self.copies.came_back(before)
        if forked is not None:
            return forked
        return {
            "ok": True,
            "modules": names,
            "wall_ns": perf_counter_ns() - started,
            "device_runtimes": statement_loop.device_runtimes(),
            "threads": _os_threads(),
            "cpu_ns": process_time_ns(),
        }

    def fork(self, request):
        """Fork a child that serves the protocol on this channel (statement_fork.ForkServerProcess);
        not where this process initialised a GPU runtime (its children could not use it)."""
        self.reply_stream.flush()
        runtimes = statement_loop.device_runtimes()
        if runtimes and not self.forks.waiting:
            return {
                "ok": False,
                "phase": "fork",
                "error": "not forking: this process initialised %s, which does not survive "
                "fork" % ", ".join(runtimes),
            }
        return self.forks.fork(request)

    def release_setup(self):
        """Drop every reference to the set-up's names, so that what only they held is freed."""
        namespace, self.namespace = self.namespace, None
        self.loop = self.empty_loop = None
        if namespace is not None:
            namespace.clear()

    def stop_leftovers(self):
        """Stop what the set-up or statement started and left running, and tell the parent how
        many in the reply to its quit."""
        self.forks.release_waiting()
        left = process_tree.stop_descendants()
        if self.quit_asked:
            try:
                self.reply({"ok": True, "left": left})
            except (OSError, ValueError):
                pass  # the parent is gone

    def serve(self):
        while True:
            request = self.read_request()
            if request is None or request.get("op") == "quit":
                self.quit_asked = request is not None
                return
            handler = self.ops.get(request.get("op"), _unknown_op)
            self.reply(handler(self, request))


def _lens_op(handler):
    """A lens's op as the worker serves it: what it raises, and a copy of the worker that the
    measured code forked meanwhile, replied as the protocol's failures (the built-in ops see to
    both themselves)."""

    def served(worker, request):
        try:
            reply = handler(worker, request)
        except BaseException:
            reply = {"ok": False, "phase": "protocol", "error": traceback.format_exc()}
        return worker.copies.came_back() or reply

    return served


def _unknown_op(worker, request):
    return {"ok": False, "phase": "protocol", "error": "unknown op %r" % (request.get("op"),)}


# the protocol's own ops (see the module docstring), served as the lenses' registered ones are
_BUILT_IN_OPS = {
    "setup": Worker.setup,
    "check": lambda worker, request: worker.check(),
    "calibrate": Worker.calibrate,
    "sample": Worker.sample,
    "pin": Worker.pin,
    "evaluate": Worker.evaluate,
    "register": Worker.register,
    "preload": Worker.preload,
    "fork": Worker.fork,
}


def main():
    """The worker's entry point: the protocol kept on private copies of stdin and stdout, then
    requests answered until quit."""
    # Keep the protocol on private copies of stdin and stdout (os.dup: not inherited by what
    # the benchmark starts, which could otherwise hold the channel open or read requests); the
    # benchmark's stdin is /dev/null and its prints go to stderr.
    request_fd = os.dup(0)
    reply_fd = os.dup(1)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_fd, 0)
    os.close(null_fd)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)
    # a crash in native code prints the Python stack where it happened on stderr, which the
    # parent shows with its error (signal handlers only: nothing runs while measuring)
    faulthandler.enable(sys.stderr)
    reply_stream = os.fdopen(reply_fd, "w")
    request_stream = os.fdopen(request_fd, "r")
    worker = Worker(reply_stream, request_stream, channel=(request_fd, reply_fd))
    # orphans of what the benchmark starts (a daemon that double-forked and left the session)
    # re-parent to the worker, which stops them when it quits
    process_tree.become_subreaper()
    # registered before the set-up's own: at an ordinary exit, it runs after them
    atexit.register(worker.stop_leftovers)
    # the first line tells the parent this really is a perflab worker in a Python interpreter
    worker.reply({"hello": "perflab-worker", "protocol": 1})
    worker.serve()
    _exit_without_teardown(worker)


def _exit_without_teardown(worker):
    """Once the parent said quit: run what the set-up registered to run at exit (atexit, and
    weakref.finalize through it), let go of the set-up's own objects (their finalisers run,
    e.g. a NamedTemporaryFile's, which removes its file), flush, and leave without tearing
    down the imported modules: tearing down a large library's modules (torch's) costs a good
    part of a second per process after its last sample, which every fork server and every
    fresh worker of such a set-up would pay inside the budget (and the next generation's
    measuring CPU with it). Not while another non-daemon thread runs: the interpreter would wait for
    it, and so does this worker, by exiting as usual (stopping the leftovers then is the last exit
    function)."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
        thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate()
    ):
        return
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is None:  # not CPython
        return
    atexit.unregister(worker.stop_leftovers)  # after the set-up's objects are finalised
    run_exit_functions()
    worker.release_setup()
    gc.collect()
    worker.stop_leftovers()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)


def _os_threads():
    """The process's OS threads (a library's own included); 0 where /proc cannot say."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


if __name__ == "__main__":
    main()
