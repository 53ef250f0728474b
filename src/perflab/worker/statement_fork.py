"""The statement worker as a fork server: the set-up's imports loaded once, and the children it
forks to serve the protocol, some forked ahead to start from one state. Standard library only,
Python 3.7+: it runs in the variant's interpreter, next to statement_worker.py."""

import array
import ast
import atexit
import functools
import json
import os
import sys

try:  # next to the statement worker, which runs as a script in the variant's Python
    import process_tree
except ImportError:  # imported as perflab.worker.statement_fork (perflab's own tests)
    from perflab.worker import process_tree


def preload_modules(setup):
    """Import the set-up's top-level modules (its import statements only) and call the
    perflab_preload(setup) of a module they bind that defines one; the modules' names."""
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
    return [a.name for n in imports for a in getattr(n, "names", [])]


class ForkServerProcess:
    """The fork server inside the worker (the parent holds it as `measure/fork_server.py`'s
    `ForkServerClient`): forks the children that serve the protocol, and keeps those forked ahead
    until a "fork" request releases them."""

    def __init__(self, worker):
        self.worker = worker  # what a child becomes: a worker of its own
        self.waiting = []  # children forked ahead: (pid, release fd), in order

    def fork(self, request):
        """Fork a child (or release one forked ahead); reply once it exited. With "ahead": K, K
        more children are forked at the same moment and wait, each released by a later "fork"
        (which then forks nothing): every one of them starts from the state this process had
        before the first served. Forked one after another's exit, a later child starts from a
        state the earlier one's reply and the next request changed (glibc's heap), and counts
        differently from the first (docs/lenses/instructions.md)."""
        if self.waiting:
            pid, release = self.waiting.pop(0)
            _release(release, request)
        elif int(request.get("ahead", 0)) > 0:
            self._fork_ahead(1 + int(request["ahead"]))
            pid, release = self.waiting.pop(0)
            _release(release, request)
        else:
            pid = self.worker.copies.fork_child()
            if pid == 0:
                become_child(self.worker, request)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            code = -os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        return {"ok": True, "exited": code, "pid": pid}

    def _fork_ahead(self, count):
        """`count` children forked back to back, each blocked on a pipe of its own until a
        "fork" releases it (with that request's env and padding). Everything the loop keeps is
        made before the first fork (the pipes, an array for the pids), so that a later child
        does not start with objects the earlier forks left alive: they move a later child's
        instruction count away from the first's."""
        pipes = [os.pipe() for _ in range(count)]
        pids = array.array("q", bytes(8 * count))
        for index in range(count):
            pid = self.worker.copies.fork_child()
            if pid == 0:
                for other, (wait_fd, release_fd) in enumerate(pipes):
                    os.close(release_fd)
                    if other != index:
                        os.close(wait_fd)
                become_child(self.worker, _wait_for_release(pipes[index][0]))
            pids[index] = pid
        for wait_fd, _ in pipes:
            os.close(wait_fd)
        self.waiting = [(pids[index], pipes[index][1]) for index in range(count)]

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


def become_child(worker, request):
    """A forked child: becomes a worker of its own on the same channel (its own subreaper, its
    env, its heap and stack moved by the padding), serves until quit, and exits."""
    status = 0
    try:
        process_tree.become_subreaper()  # fork does not inherit it
        os.environ.update(request.get("env") or {})
        padding = int(request.get("padding", 0))
        worker.heap_padding = bytearray(padding)  # later allocations land elsewhere
        _at_depth(padding % 64, functools.partial(_serve_child, worker))
    except BaseException:
        status = 1
    finally:
        try:
            worker.reply_stream.flush()
        finally:
            os._exit(status)


def _serve_child(worker):
    # the exit functions a child inherits are its server's (the preload's, pytest's own):
    # they run once, in the server; the child runs those its own set-up registers (a
    # fixture's teardown), when it quits, as a worker of its own would
    clear = getattr(atexit, "_clear", None)
    if clear is not None:
        clear()
    worker.reply({"hello": "perflab-worker", "protocol": 1, "forked": True, "pid": os.getpid()})
    worker.serve()
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is not None:
        run_exit_functions()
    worker.stop_leftovers()


def _at_depth(depth, function):
    """Call `function` `depth` Python frames deeper: moves the C stack it runs on."""
    if depth <= 0:
        return function()
    return _at_depth(depth - 1, function)
