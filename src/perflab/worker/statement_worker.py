"""perflab statement worker: runs inside the variant's own interpreter (Python 3.7+, stdlib only).
One file on purpose: it is started by path in an interpreter that has no perflab installed, so
it cannot import a sibling module.

It speaks JSON lines with the parent over its original stdout/stdin, kept on private file
descriptors that the processes a benchmark starts do not inherit. The benchmark's own output on
stdout is redirected to stderr so it cannot corrupt the protocol; its stdin is /dev/null.

The worker's first line is {"hello": "perflab-worker", "protocol": 1}. Then, requests (one JSON
object per line) and replies:
  {"op": "setup", "stmt": S, "setup": S,
   "scope": "function"|"module"}                   -> {"ok": true, "pid", "python", "executable"}
     function scope (default): the loop is a function whose globals are the setup's names, as
     timeit's; module scope: the loop is top-level code, as torch's collect_callgrind runs it.
  {"op": "check"}                                  -> {"ok": true, "wall_ns": N,
                                                        "device_synchronised": "cuda"|null}
     one iteration. Where the process has initialised CUDA through torch (the set-up or the
     statement did), every timed loop synchronises the device before each clock reading, so
     a sample ends when the work it launched is done; "device_synchronised" says so.
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
                                                        "device_runtimes": [names]}
     a fork server: imports the setup's top-level modules (its import statements only), so
     the children it forks start with them loaded; a module those statements bind that
     defines perflab_preload(setup) is then called with S, to do once what every child's
     set-up would repeat (the set-up must work without it: fresh workers never call it);
     "device_runtimes", the GPU runtimes the imports initialised ("cuda" ...): a server with
     any must not fork (its children's first use of the device fails), and "fork" then fails
     with phase "fork"
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

import array
import ast
import atexit
import faulthandler
import gc
import hashlib
import itertools
import json
import os
import select
import sys
import time
import traceback

try:
    import resource
except ImportError:  # pragma: no cover - non-POSIX
    resource = None

from time import perf_counter_ns

try:
    import process_tree  # next to this script, which runs as a script in the variant's Python
except ImportError:  # imported as perflab.worker.statement_worker (perflab's own tests)
    from perflab.worker import process_tree

_TEMPLATE = """
def _perflab_inner(_perflab_it, _perflab_timer):
    _perflab_t0 = _perflab_timer()
    for _perflab_i in _perflab_it:
{body}
    return _perflab_timer() - _perflab_t0
"""


def _indent(code, spaces):
    pad = " " * spaces
    return "\n".join(pad + line for line in code.splitlines()) or pad + "pass"


# Module scope: the statement runs as top-level code (names resolve through the namespace dict,
# LOAD_NAME), as torch.utils.benchmark's collect_callgrind runs it.
_MODULE_TEMPLATE = """
_perflab_t0 = _perflab_timer()
for _perflab_i in _perflab_it:
{body}
_perflab_elapsed = _perflab_timer() - _perflab_t0
"""


def _compile_loop(stmt, namespace, scope="function"):
    """A callable loop(iterator, timer) -> elapsed ns running `stmt` once per item."""
    # Compile the statement alone first so a syntax error points at the user's code.
    compile(stmt, "<stmt>", "exec")
    if scope == "module":
        code = compile(_MODULE_TEMPLATE.format(body=_indent(stmt, 4)), "<perflab-loop>", "exec")

        def module_loop(iterator, timer):
            namespace["_perflab_it"] = iterator
            namespace["_perflab_timer"] = timer
            exec(code, namespace)
            return namespace["_perflab_elapsed"]

        return module_loop
    source = _TEMPLATE.format(body=_indent(stmt, 8))
    exec(compile(source, "<perflab-loop>", "exec"), namespace)
    return namespace.pop("_perflab_inner")


# Device files a GPU runtime keeps open once initialised: such a runtime does not survive fork.
_DEVICE_FILES = (("/dev/nvidia", "cuda"), ("/dev/kfd", "rocm"), ("/dev/dri/renderD", "gpu"))


def _torch_cuda():
    """torch.cuda where this process already imported torch (never imported here: most
    variants have no torch, and importing it is not this worker's to decide)."""
    return getattr(sys.modules.get("torch"), "cuda", None)


def device_runtimes(fd_dir="/proc/self/fd"):
    """The GPU runtimes this process has initialised: device files of a GPU driver among its
    open files, and torch's own record of CUDA's initialisation. A process with any must not
    fork workers: the children's first use of the device fails."""
    found = set()
    try:
        names = os.listdir(fd_dir)
    except OSError:
        names = []
    for name in names:
        try:
            target = os.readlink(os.path.join(fd_dir, name))
        except OSError:
            continue  # closed meanwhile (the listing's own fd)
        for prefix, runtime in _DEVICE_FILES:
            if target.startswith(prefix):
                found.add(runtime)
    cuda = _torch_cuda()
    try:
        if cuda is not None and cuda.is_initialized():
            found.add("cuda")
    except Exception:  # a torch too old or broken to say: its files above still count
        pass
    return sorted(found)


def _device_synchroniser():
    """torch.cuda.synchronize where this process has initialised CUDA through torch, else None:
    a statement that launches device work is timed until that work is done, not until the
    launch returns."""
    cuda = _torch_cuda()
    try:
        if cuda is not None and cuda.is_initialized():
            return cuda.synchronize
    except Exception:
        return None
    return None


def _synchronised(timer, synchronise):
    """`timer`, read after the device finished what was launched before the reading."""

    def synchronised_timer():
        synchronise()
        return timer()

    return synchronised_timer


_THIS_FILE = os.path.abspath(__file__)

_EXACT_CHARS = 4096  # a text (or repr) longer than this is sent as a digest and its start
_ARRAY_ELEMENTS = 1 << 20  # an array with more elements is sent as a digest and a stride


class Uncomparable(Exception):
    """A --check value perflab cannot compare across processes."""


def _digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _exact(type_name, text):
    encoded = {"kind": "exact", "type": type_name, "text": text}
    if len(text) > _EXACT_CHARS:
        encoded["text"] = text[:200]
        encoded["digest"] = _digest(text)
        encoded["length"] = len(text)
    return encoded


def _flatten(data, out):
    if isinstance(data, (list, tuple)):
        for item in data:
            _flatten(item, out)
    else:
        out.append(data)


def _shape_of(data):
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        data = data[0] if data else None
    return shape


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _array(type_name, data, shape):
    flat = []
    _flatten(data, flat)
    flat = [[v.real, v.imag] if isinstance(v, complex) else v for v in flat]
    if flat and isinstance(flat[0], list):  # complex: a trailing axis of (real, imaginary)
        shape = list(shape) + [2]
        flat = [part for pair in flat for part in pair]
    if not all(_is_number(v) for v in flat):
        return None
    encoded = {"kind": "array", "type": type_name, "shape": list(shape), "values": flat}
    if len(flat) > _ARRAY_ELEMENTS:
        stride = -(-len(flat) // _ARRAY_ELEMENTS)
        encoded["values"] = flat[::stride]
        encoded["stride"] = stride
        encoded["size"] = len(flat)
        encoded["digest"] = _digest(repr(flat))
    return encoded


def encode_value(value):
    """A --check value as JSON perflab compares across variants (standard library only)."""
    type_name = type(value).__module__ + "." + type(value).__qualname__
    type_name = type_name.replace("builtins.", "")
    if value is None or isinstance(value, (bool, int, str)):
        return _exact(type_name, value if isinstance(value, str) else repr(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _exact(type_name, bytes(value).hex())
    if isinstance(value, (float, complex)):
        return _array(type_name, [value], [])
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu()
    if not hasattr(value, "tolist") and hasattr(value, "__array__"):
        value = value.__array__()
    if hasattr(value, "tolist"):
        data = value.tolist()
        shape = getattr(value, "shape", None)
        shape = [int(n) for n in shape] if shape is not None else _shape_of(data)
        if "dtype" in dir(value):
            type_name += "[%s]" % (value.dtype,)
        encoded = _array(type_name, data, shape)
        return encoded if encoded is not None else _exact(type_name, repr(data))
    if isinstance(value, (list, tuple)):
        encoded = _array(type_name, value, _shape_of(value))
        if encoded is not None and value:
            return encoded
    text = repr(value)
    if " at 0x" in text:
        raise Uncomparable(
            "the value is a %s whose repr names its address (%s), which differs in every "
            "process: return something comparable instead (a number, a string, a list, an "
            "array: e.g. a field of it, or vars() of it), or give %s a __repr__ that shows "
            "its content" % (type_name, text[:120], type(value).__qualname__)
        )
    return _exact(type_name, text)


def _user_traceback():
    """The current exception's traceback without this worker's own frames: the user's code
    (<setup>, <stmt>, <perflab-loop>) and the libraries it called."""
    error_type, error, trace = sys.exc_info()
    frames = [f for f in traceback.extract_tb(trace) if os.path.abspath(f.filename) != _THIS_FILE]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(error_type, error)
    return "".join(lines)


def _current_cpu():
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[36])  # field 39 "processor"; fields start after "pid (comm)"
    except (OSError, IndexError, ValueError):
        return None


def _involuntary_switches():
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw


def _schedstat_path():
    for path in ("/proc/thread-self/schedstat", "/proc/self/schedstat"):
        try:
            with open(path, "rb") as stat:
                if len(stat.read().split()) >= 2:
                    return path
        except OSError:
            pass
    return None


_SCHEDSTAT = _schedstat_path()


def _run_queue_ns():
    """Nanoseconds this thread has waited on a run queue so far (schedstat's second field)."""
    if _SCHEDSTAT is None:
        return None
    try:
        with open(_SCHEDSTAT, "rb") as stat:
            return int(stat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _thread_time_ns():
    try:
        return time.thread_time_ns()
    except (AttributeError, OSError):  # pragma: no cover - platforms without a thread clock
        return None


def _process_time_ns():
    try:
        return time.process_time_ns()
    except (AttributeError, OSError):  # pragma: no cover - platforms without a process clock
        return None


def _no_clock():
    return 0


_UNTIMED_REPLY = {
    "ok": True,
    "wall_ns": 0,
    "cpu": None,
    "nivcsw": None,
    "cpu_ns": None,
    "run_queue_ns": None,
}


def _unpreempted_ns(wall_ns, cpu_ns, run_queue_ns):
    """wall_ns less the time other processes took (perflab.stats.preemption.lost_ns)."""
    if run_queue_ns is None or run_queue_ns <= 0:
        return wall_ns
    off_cpu = wall_ns if cpu_ns is None else max(0, wall_ns - cpu_ns)
    return wall_ns - min(run_queue_ns, off_cpu)


# how long a worker waits, after the statement first ran, for a copy of itself that the
# statement forked to come back (it says so on the worker's alarm pipe as it leaves)
COPY_WAIT_S = 0.5
FORKED_ERROR = (
    "the %s forked a copy of the worker (os.fork() with no exec or os._exit() in the "
    "child), and the copy returned into perflab's loop: every sample would fork again"
)


_COPY_FROM = {"set-up": b"u", "statement": b"s"}  # what a copy writes on the alarm pipe


def _children():
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


class Worker:
    def __init__(self, reply_stream, request_stream):
        self.reply_stream = reply_stream
        self.request_stream = request_stream
        self.loop = None
        self.empty_loop = None
        self.ops = {}  # op name -> handler(worker, request), registered by lenses
        self.namespace = None  # the setup's names, where --check expressions are evaluated
        self.heap_padding = None  # a forked child's: moves its later allocations
        self.waiting = []  # a fork server's children forked ahead: (pid, release fd), in order
        self.quit_asked = False  # the parent said quit (rather than closing the channel)
        # a process running this code with another pid is a copy the measured code forked:
        # it tells the worker on this pipe and leaves, never answering the parent itself
        self.pid = os.getpid()
        self.copy_alarm = os.pipe()

    def traceback(self):
        """The current exception's traceback without the worker's own frames."""
        return _user_traceback()

    def device_runtimes(self):
        """The GPU runtimes this process has initialised (for a lens op's reply)."""
        return device_runtimes()

    def register(self, request):
        namespace = {"__name__": "perflab_ops_%s" % request.get("name", "lens")}
        try:
            exec(compile(request["source"], "<%s ops>" % request.get("name"), "exec"), namespace)
            ops = dict(namespace["OPS"])
        except BaseException:
            return {"ok": False, "phase": "register", "error": traceback.format_exc()}
        self.ops.update(ops)
        return {"ok": True, "ops": sorted(ops)}

    def reply(self, message):
        self.reply_stream.write(json.dumps(message) + "\n")
        self.reply_stream.flush()

    def leave_if_a_copy(self, where):
        """In a copy of this worker that the set-up or the statement forked, once it returned
        into the worker: say where to the worker and leave at once (no reply, no exit
        handlers)."""
        if os.getpid() != self.pid:
            try:
                os.write(self.copy_alarm[1], _COPY_FROM[where])
            finally:
                os._exit(0)

    def copy_came_back(self, children_before=None):
        """The reply saying a copy of this worker came back (see leave_if_a_copy), or None;
        with the children there were before the code ran, waits up to COPY_WAIT_S for a new
        child that still runs this program (not exec'd) to come back or go."""
        deadline = time.monotonic() + COPY_WAIT_S
        while True:
            ready, _, _ = select.select([self.copy_alarm[0]], [], [], 0)
            if ready:
                said = os.read(self.copy_alarm[0], 4096)
                where = "set-up" if _COPY_FROM["set-up"] in said else "statement"
                return {"ok": False, "phase": "forked", "error": FORKED_ERROR % where}
            if children_before is None:
                return None
            now = _children()
            running = [p for p in (now or ()) if p not in children_before and _same_program(p)]
            if not running or time.monotonic() > deadline:
                return None
            time.sleep(0.001)

    def read_request(self):
        line = self.request_stream.readline()
        if not line:
            return None
        return json.loads(line)

    def setup(self, request):
        namespace = {"__name__": "__perflab__"}
        self.namespace = namespace
        try:
            exec(compile(request.get("setup") or "pass", "<setup>", "exec"), namespace)
        except BaseException:
            self.leave_if_a_copy("set-up")
            return {"ok": False, "phase": "setup", "error": _user_traceback()}
        self.leave_if_a_copy("set-up")
        # not waited for: a copy the set-up forked that comes back later is seen by the
        # statement's first run (before it is ever run in a loop)
        forked = self.copy_came_back()
        if forked is not None:
            return forked
        try:
            scope = request.get("scope", "function")
            self.loop = _compile_loop(request["stmt"], namespace, scope)
            self.empty_loop = _compile_loop("pass", dict(namespace), scope)
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
        before = _children()
        try:
            wall_ns = self.timed(1)
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}
        forked = self.copy_came_back(before)
        if forked is not None:
            return forked
        synchronised = "cuda" if _device_synchroniser() is not None else None
        return {"ok": True, "wall_ns": wall_ns, "device_synchronised": synchronised}

    def evaluate(self, request):
        """The value of a --check expression in the setup's namespace, encoded."""
        try:
            code = compile(request["expr"], "<check>", "eval")
            value = eval(code, self.namespace if self.namespace is not None else {})
        except BaseException:
            return {"ok": False, "phase": "check", "error": _user_traceback()}
        try:
            return {"ok": True, "value": encode_value(value)}
        except Uncomparable as error:
            return {"ok": False, "phase": "check", "error": str(error), "uncomparable": True}
        except BaseException:
            return {"ok": False, "phase": "check", "error": _user_traceback()}

    def timed(self, loops, empty=False, timer=perf_counter_ns):
        loop = self.empty_loop if empty else self.loop
        synchronise = _device_synchroniser()
        if synchronise is not None:
            timer = _synchronised(timer, synchronise)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # as timeit does: a collection inside one sample is noise, not signal
        try:
            return loop(itertools.repeat(None, loops), timer)
        finally:
            self.leave_if_a_copy("statement")
            if gc_was_enabled:
                gc.enable()

    def accounted(self, loops, empty=False):
        """timed(), with the thread's CPU time and run-queue wait read right around it:
        (wall_ns, cpu_ns, run_queue_ns), the last two None where unavailable. The thread
        waits on the run queue while another thread of this process runs on its CPU too: that
        is the statement's own work, not another process's turn, and comes off the wait."""
        queued_before = _run_queue_ns()
        process_before = _process_time_ns()
        cpu_before = _thread_time_ns()
        wall_ns = self.timed(loops, empty)
        cpu_after = _thread_time_ns()
        process_after = _process_time_ns()
        queued_after = _run_queue_ns()
        cpu_ns = queued = None
        if cpu_before is not None and cpu_after is not None:
            cpu_ns = cpu_after - cpu_before
        if queued_before is not None and queued_after is not None:
            queued = queued_after - queued_before
            if cpu_ns is not None and process_before is not None and process_after is not None:
                other_threads_ns = max(0, process_after - process_before - cpu_ns)
                queued = max(0, queued - other_threads_ns)
        return wall_ns, cpu_ns, queued

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
            wall_ns = _unpreempted_ns(*self.accounted(loops))
            forked = self.copy_came_back()
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
        before = _involuntary_switches() if timed else None
        try:
            if timed:
                wall_ns, cpu_ns, queued = self.accounted(loops, empty)
            else:
                wall_ns, cpu_ns, queued = self.timed(loops, empty, _no_clock), None, None
        except BaseException:
            return {"ok": False, "phase": "stmt", "error": _user_traceback()}
        forked = self.copy_came_back()
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
        after = _involuntary_switches()
        return {
            "ok": True,
            "wall_ns": wall_ns,
            "cpu": _current_cpu(),
            "nivcsw": None if before is None else after - before,
            "cpu_ns": cpu_ns,
            "run_queue_ns": queued,
        }

    def pin(self, request):
        cpu = int(request["cpu"])
        try:
            threads = [int(tid) for tid in os.listdir("/proc/self/task")]
        except OSError:
            threads = [0]
        try:
            for thread in threads:
                try:
                    os.sched_setaffinity(thread, {cpu})
                except ProcessLookupError:
                    pass  # a thread that ended meanwhile
        except (AttributeError, OSError):
            return {"ok": False, "phase": "protocol", "error": _user_traceback()}
        return {"ok": True, "cpu": _current_cpu()}

    def preload(self, request):
        """Import the setup's top-level modules once, for the children this process forks."""
        started = perf_counter_ns()
        try:
            setup = request.get("setup") or "pass"
            tree = ast.parse(setup, "<setup>")
            imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            module = ast.Module(body=imports, type_ignores=[])
            namespace = {"__name__": "__perflab__"}
            exec(compile(module, "<setup imports>", "exec"), namespace)
            # a module the set-up imports may do here, once, what each child's set-up would
            # repeat (the pytest suites' plugin collects the test's file)
            for value in list(namespace.values()):
                # the module's own attribute: a module's __getattr__ (lazy loaders) not asked
                hook = vars(value).get("perflab_preload") if isinstance(value, type(sys)) else None
                if callable(hook):
                    hook(setup)
        except BaseException:
            return {"ok": False, "phase": "setup", "error": _user_traceback()}
        names = [a.name for n in imports for a in getattr(n, "names", [])]
        return {
            "ok": True,
            "modules": names,
            "wall_ns": perf_counter_ns() - started,
            "device_runtimes": device_runtimes(),
        }

    def fork(self, request):
        """Fork a child that serves the protocol on this channel; reply once it exited. With
        "ahead": K, K more children are forked at the same moment and wait, each released by a
        later "fork" (which then forks nothing): every one of them starts from the state this
        process had before the first served. Forked one after another's exit, a later child
        starts from a state the earlier one's reply and the next request changed (glibc's
        heap), and counts differently from the first (docs/lenses/instructions.md)."""
        self.reply_stream.flush()
        runtimes = device_runtimes()
        if runtimes and not self.waiting:
            return {
                "ok": False,
                "phase": "fork",
                "error": "not forking: this process initialised %s, which does not survive "
                "fork" % ", ".join(runtimes),
            }
        if self.waiting:
            pid, release = self.waiting.pop(0)
            _release(release, request)
        elif int(request.get("ahead", 0)) > 0:
            self._fork_ahead(1 + int(request["ahead"]))
            pid, release = self.waiting.pop(0)
            _release(release, request)
        else:
            pid = os.fork()
            if pid == 0:
                self._become_child(request)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            code = -os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        return {"ok": True, "exited": code, "pid": pid}

    def _become_child(self, request):
        status = 0
        self.pid = os.getpid()  # a child of the protocol, not a copy the code forked
        try:
            process_tree.become_subreaper()  # fork does not inherit it
            os.environ.update(request.get("env") or {})
            padding = int(request.get("padding", 0))
            self.heap_padding = bytearray(padding)  # later allocations land elsewhere
            _at_depth(padding % 64, self._serve_child)
        except BaseException:
            status = 1
        finally:
            try:
                self.reply_stream.flush()
            finally:
                os._exit(status)

    def _fork_ahead(self, count):
        """`count` children forked back to back, each blocked on a pipe of its own until a
        "fork" releases it (with that request's env and padding). Everything the loop keeps is
        made before the first fork (the pipes, an array for the pids), so that a later child
        does not start with objects the earlier forks left alive: sum(range(100)) counted
        0.6% apart in the second child when the pids were kept in a list as they came."""
        pipes = [os.pipe() for _ in range(count)]
        pids = array.array("q", bytes(8 * count))
        for index in range(count):
            pid = os.fork()
            if pid == 0:
                for other, (wait_fd, release_fd) in enumerate(pipes):
                    os.close(release_fd)
                    if other != index:
                        os.close(wait_fd)
                self._become_child(_wait_for_release(pipes[index][0]))
            pids[index] = pid
        for wait_fd, _ in pipes:
            os.close(wait_fd)
        self.waiting = [(pids[index], pipes[index][1]) for index in range(count)]

    def release_setup(self):
        """Drop every reference to the set-up's names, so that what only they held is freed."""
        namespace, self.namespace = self.namespace, None
        self.loop = self.empty_loop = None
        if namespace is not None:
            namespace.clear()

    def _serve_child(self):
        # the exit functions a child inherits are its server's (the preload's, pytest's own):
        # they run once, in the server; the child runs those its own set-up registers (a
        # fixture's teardown), when it quits, as a worker of its own would
        clear = getattr(atexit, "_clear", None)
        if clear is not None:
            clear()
        self.reply({"hello": "perflab-worker", "protocol": 1, "forked": True, "pid": os.getpid()})
        self.serve()
        run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
        if run_exit_functions is not None:
            run_exit_functions()
        self.stop_leftovers()

    def release_waiting(self):
        """A fork server's children forked ahead and never released: they leave as their pipe
        closes (they are perflab's, not the benchmark's leftovers)."""
        waiting, self.waiting = self.waiting, []
        for _, release in waiting:
            os.close(release)
        for pid, _ in waiting:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def stop_leftovers(self):
        """Stop what the set-up or statement started and left running, and tell the parent how
        many in the reply to its quit."""
        self.release_waiting()
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
            op = request.get("op")
            if op == "setup":
                self.reply(self.setup(request))
            elif op == "check":
                self.reply(self.check())
            elif op == "calibrate":
                self.reply(self.calibrate(request))
            elif op == "sample":
                self.reply(self.sample(request))
            elif op == "pin":
                self.reply(self.pin(request))
            elif op == "evaluate":
                self.reply(self.evaluate(request))
            elif op == "register":
                self.reply(self.register(request))
            elif op == "preload":
                self.reply(self.preload(request))
            elif op == "fork":
                self.reply(self.fork(request))
            elif op in self.ops:
                try:
                    reply = self.ops[op](self, request)
                except BaseException:
                    reply = {"ok": False, "phase": "protocol", "error": traceback.format_exc()}
                self.reply(reply)
            else:
                self.reply({"ok": False, "phase": "protocol", "error": "unknown op %r" % (op,)})


def _release(release_fd, request):
    """Let a child forked ahead go on, as `request` (its env and padding) asks."""
    message = {"env": request.get("env") or {}, "padding": request.get("padding", 0)}
    os.write(release_fd, (json.dumps(message) + "\n").encode())
    os.close(release_fd)


def _wait_for_release(wait_fd):
    """A child forked ahead: blocks until released; leaves at once when its server is gone or
    quit without releasing it."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(wait_fd, 65536)
        if not chunk:
            os._exit(0)
        data += chunk
    os.close(wait_fd)
    return json.loads(data.decode())


def _at_depth(depth, function):
    """Call `function` `depth` Python frames deeper: moves the C stack it runs on."""
    if depth <= 0:
        return function()
    return _at_depth(depth - 1, function)


def main():
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
    worker = Worker(reply_stream, request_stream)
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
    measuring CPU with it). Not while another
    non-daemon thread runs: the interpreter would wait for it, and so does this worker, by
    exiting as usual (stopping the leftovers then is the last exit function)."""
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


if __name__ == "__main__":
    main()
