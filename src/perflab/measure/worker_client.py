"""The parent's side of the statement worker protocol (see perflab/worker/statement_worker.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perflab.machine.proc import LaunchSpec, LiveProcess, ProcessRunner, count_stopped
from perflab.measure.worker_failures import WorkerFailures
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.model import Benchmark, Variant
from perflab.worker import STATEMENT_WORKER_PATH

STARTUP_TIMEOUT_S = 120.0  # the least a worker's start-up and setup are given
# how long a worker whose benchmark failed may take to quit (its set-up's exit functions and
# the stop of what the set-up started: at most 2 s, see worker/process_tree.py) before it is
# killed
QUIT_AFTER_FAILURE_S = 5.0


@dataclass(frozen=True)
class WorkerInfo:
    """What a statement worker reports about itself when it starts: its process, its Python, and the
    device it synchronises."""

    pid: int
    python_version: str
    implementation: str
    executable: str
    # "cuda" where the set-up or statement initialised CUDA through torch: samples then
    # synchronise the device before each clock reading
    device_synchronised: str | None = None
    # the GPU runtimes the set-up and statement initialised (e.g. "cuda"): a server that ran
    # them could not fork its workers
    device_runtimes: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkerSample:
    """One timed sample from a statement worker: wall time, its CPU, and what interrupted it."""

    wall_ns: int
    cpu: int | None
    involuntary_switches: int | None
    run_queue_ns: int | None = None  # waited runnable while another process had the CPU
    cpu_ns: int | None = None  # the worker thread's CPU time during the sample


@dataclass(frozen=True)
class WorkerOps:
    """A lens's own statement-worker ops: Python source (standard library only, Python 3.7+)
    defining `OPS = {op name: handler(worker, request) -> reply}`, registered in each worker the
    lens starts. The lens sends those requests with `StatementWorker.call` and parses the
    replies itself."""

    name: str  # what a failed registration and the worker's tracebacks call them
    source: str

    @classmethod
    def from_module(cls, module: str) -> WorkerOps:
        """The source of `module` (found, never imported: it runs in the variant's Python),
        named by `ops_name`."""
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ConfigError(f"perflab is incomplete: {module} is missing")
        return cls(name=ops_name(module), source=Path(spec.origin).read_text())


def ops_name(module: str) -> str:
    """What an ops module's ops are called: a lens's own `lenses/<lens>/worker_ops.py` by its
    lens, a module shared by several lenses (`worker/callgrind_ops.py`) by what it measures; never
    by the package above it, which names both shared modules "worker"."""
    package, _, stem = module.rpartition(".")
    if stem == "worker_ops":
        return package.rpartition(".")[2] or module
    return stem.removesuffix("_ops") or module


def variant_environment(variant: Variant, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The complete environment a variant's processes run in: perflab's, plus the variant's."""
    env = dict(os.environ if base is None else base)
    env.update(variant.env)
    return env


def interpreter_for(variant: Variant, default: str) -> str:
    return variant.python or default


def check_variant_paths(
    variant: Variant, interpreter: str | None, *, benchmark: str | None = None
) -> None:
    """The variant's directory exists and its interpreter (when it is a path) is an executable
    file; a relative path runs relative to the variant's cwd, as Popen resolves it."""
    if variant.cwd is not None and not os.path.isdir(variant.cwd):
        raise ConfigError(
            f"working directory {variant.cwd!r} does not exist",
            hint="cwd= takes an existing directory (in an experiment file, relative to it)",
            variant=variant.name,
            benchmark=benchmark,
        )
    if interpreter is not None and os.sep in interpreter:
        located = os.path.join(variant.cwd or ".", interpreter)
        if os.path.isdir(located) or not os.access(located, os.X_OK):
            raise ConfigError(
                f"interpreter {interpreter!r} does not exist or is not executable",
                hint="python= takes the path of a Python executable, e.g. /envs/after/bin/python",
                variant=variant.name,
                benchmark=benchmark,
            )


# written so that any Python answers it (print() with two arguments prints a tuple in 2.x)
_PYTHON_PROBE = (
    "import sys; sys.stdout.write('perflab-python %d.%d.%d\\n' % tuple(sys.version_info[:3]))"
)
_PROBE_TIMEOUT_S = 120.0  # a cold interpreter on a loaded machine; sitecustomize hooks
# lines of a failed interpreter probe shown in the error: its first lines say why; the rest are
# counted
_PROBE_OUTPUT_LINES = 5


def _probed_version(stdout: str) -> tuple[int, ...] | None:
    words = stdout.strip().split()
    if len(words) != 2 or words[0] != "perflab-python":
        return None
    try:
        return tuple(int(part) for part in words[1].split("."))
    except ValueError:
        return None


def check_interpreter(runner: ProcessRunner, variant: Variant, interpreter: str) -> None:
    """The variant's python= runs Python 3.7+, asked before a run is created for it: a shell
    or another program given as python= would otherwise fail inside the first worker, with its
    complaints about the worker script as the only explanation."""
    completed = runner.run(
        LaunchSpec(
            argv=(interpreter, "-c", _PYTHON_PROBE),
            env=variant_environment(variant),
            cwd=variant.cwd,
        ),
        timeout_s=_PROBE_TIMEOUT_S,
    )
    version = _probed_version(completed.stdout) if completed.ok else None
    if version is not None and version >= (3, 7):
        return
    if version is not None:
        how = f"it is Python {'.'.join(map(str, version))}, older than 3.7"
    else:
        how = f"asked for its version, it {completed.describe_failure()}"
        if completed.ok:
            how = "asked for its version, it did not answer as Python does"
    output = (completed.stderr or completed.stdout).strip().splitlines()
    shown = output[:_PROBE_OUTPUT_LINES]
    if len(output) > len(shown):
        shown.append(f"... ({len(output) - len(shown)} more lines)")
    raise ConfigError(
        f"{interpreter!r} did not start perflab's worker: it is not a Python 3.7+ interpreter "
        f"({how})",
        hint="python= must be a Python 3.7+ interpreter, e.g. /envs/after/bin/python",
        variant=variant.name,
        detail=None if version is not None else "\n".join(shown) or None,
    )


def count_stopped_at_quit(process: LiveProcess, timeout_s: float) -> int:
    """After a quit: the worker's reply, how many processes the benchmark left running that
    the worker stopped (counted in `proc.counting_stopped`'s tally); 0 when it exited without
    one."""
    deadline = time.monotonic() + timeout_s
    while (left_s := deadline - time.monotonic()) > 0:
        line = process.read_line(left_s)
        if not line:  # it ended, or said nothing in time
            return 0
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(reply, dict) and "left" in reply:
            left = int(reply["left"])
            count_stopped(left)
            return left
    return 0


@dataclass(frozen=True)
class WorkerLaunch:
    """How a worker process starts and how long its replies may take. `prefix` wraps the
    interpreter (e.g. `valgrind --tool=callgrind ...` or `perf stat ... --`): the worker runs
    under the tool, which the parent switches on around the measured loop."""

    interpreter: str
    cpu: int | None
    timeout_s: float
    prefix: Sequence[str] = ()
    extra_env: Mapping[str, str] | None = None
    pass_fds: Sequence[int] = ()
    disable_aslr: bool = False

    def spec(self, variant: Variant) -> LaunchSpec:
        """The worker's command line and environment for `variant`."""
        return LaunchSpec(
            argv=(*self.prefix, self.interpreter, "-u", str(STATEMENT_WORKER_PATH)),
            env={**variant_environment(variant), **(self.extra_env or {})},
            cwd=variant.cwd,
            cpu=self.cpu,
            disable_aslr=self.disable_aslr,
        )


def _spawn(
    runner: ProcessRunner, benchmark: Benchmark, variant: Variant, launch: WorkerLaunch
) -> LiveProcess:
    """The worker's process, started; an interpreter that cannot be started is the user's
    configuration error."""
    interpreter = launch.interpreter
    try:
        check_variant_paths(variant, interpreter, benchmark=benchmark.name)
        return runner.spawn(launch.spec(variant), pass_fds=launch.pass_fds)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as error:
        raise ConfigError(
            f"cannot start {interpreter!r}: {error.strerror or error}",
            hint="python= takes the path of a Python executable, e.g. /envs/after/bin/python",
            variant=variant.name,
            benchmark=benchmark.name,
        ) from error


class StatementWorker:
    """One live worker process for one (benchmark, variant, generation).

    `StatementWorker.start` launches one; the constructor talks to a process already started,
    such as a fork server's child (`measure/fork_server.py`). The parent switches the tool a
    launch wraps on around the measured loop through
    `sample(..., on_region_start=..., on_region_end=...)`.
    """

    def __init__(
        self,
        process: LiveProcess,
        benchmark: Benchmark,
        variant: Variant,
        launch: WorkerLaunch,
        *,
        scope: str = "function",
        ops: Sequence[WorkerOps] = (),
    ) -> None:
        self.benchmark = benchmark
        self.variant = variant
        self.timeout_s = launch.timeout_s
        self.scope = scope
        self.leftover_processes = 0  # started by the benchmark, still running when it ended
        self.process: LiveProcess = process
        self._idle = False  # it answered its last request and waits for the next
        self._closed = False
        self._failures = WorkerFailures(process, benchmark, variant)
        try:
            self._expect_hello(launch.interpreter)
            for lens_ops in ops:
                self._register(lens_ops)
            self.info = self._setup()
        except BaseException as error:
            self.abandon(error)  # never leave a worker behind (Ctrl-C during a long setup too)
            raise

    @classmethod
    def start(
        cls,
        runner: ProcessRunner,
        benchmark: Benchmark,
        variant: Variant,
        launch: WorkerLaunch,
        *,
        scope: str = "function",
        ops: Sequence[WorkerOps] = (),
    ) -> StatementWorker:
        """A worker started with `runner` as `launch` says, set up and ready to sample."""
        process = _spawn(runner, benchmark, variant, launch)
        return cls(process, benchmark, variant, launch, scope=scope, ops=ops)

    @property
    def pid(self) -> int:
        return self.info.pid

    def error(
        self, message: str, *, hint: str | None = None, detail: str | None = None
    ) -> BenchmarkFailedError:
        """A failure of this worker's benchmark and variant (for lenses parsing their replies)."""
        return self._failures.error(message, hint=hint, detail=detail)

    def _send(self, message: Mapping[str, Any]) -> None:
        self._idle = False
        try:
            self.process.write_line(json.dumps(message))
        except BrokenPipeError:
            raise self._failures.died() from None

    def _receive(self, timeout_s: float | None = None, *, waiting_for: str = "") -> dict[str, Any]:
        """The worker's next reply; `waiting_for` ("setup") names what a timeout means."""
        limit_s = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise self._failures.silent(limit_s, waiting_for, STARTUP_TIMEOUT_S)
            line = self.process.read_line(min(remaining, 1.0))
            if line is not None:
                if not line:
                    raise self._failures.died()
                try:
                    reply: dict[str, Any] = json.loads(line)
                except json.JSONDecodeError:
                    self.kill()
                    raise self._failures.not_the_protocol(line) from None
                if not isinstance(reply, dict):
                    reply = {"hello": reply}
                self._idle = True
                return reply

    def _expect_hello(self, interpreter: str) -> None:
        try:
            hello = self._receive(timeout_s=max(self.timeout_s, STARTUP_TIMEOUT_S))
        except BenchmarkFailedError as error:
            raise ConfigError(
                f"{interpreter!r} did not start perflab's worker ({error.message})",
                hint="python= must be a Python 3.7+ interpreter",
                variant=self.variant.name,
                benchmark=self.benchmark.name,
                detail=error.detail,
            ) from None
        if hello.get("hello") != "perflab-worker":
            self._idle = False  # not a worker: it is killed, not asked to quit
            raise ConfigError(
                f"{interpreter!r} did not start perflab's worker (it said {hello!r})",
                hint="python= must be a Python 3.7+ interpreter",
                variant=self.variant.name,
                benchmark=self.benchmark.name,
            )

    def _request(
        self, message: Mapping[str, Any], timeout_s: float | None = None
    ) -> dict[str, Any]:
        self._send(message)
        reply = self._receive(timeout_s, waiting_for=str(message.get("op", "")))
        if not reply.get("ok", False) and not reply.get("ready", False):
            raise self.failure(reply)
        return reply

    def call(self, message: Mapping[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """Send a request (a lens's own op included) and return the reply as it came: the lens
        owns its request and its parsing (`failure` turns a failed reply into an error)."""
        self._send(message)
        return self._receive(timeout_s)

    def _register(self, ops: WorkerOps) -> None:
        reply = self.call(
            {"op": "register", "name": ops.name, "source": ops.source},
            timeout_s=max(self.timeout_s, STARTUP_TIMEOUT_S),
        )
        if not reply.get("ok"):
            raise self.error(
                f"the {ops.name} worker ops do not run in this interpreter",
                hint="a lens's worker ops must run on Python 3.7+ with the standard library",
                detail=str(reply.get("error", "")).rstrip(),
            )

    def failure(self, reply: Mapping[str, Any]) -> BenchmarkFailedError:
        """The error a failed reply (no `ok`) reports."""
        return self._failures.failed_reply(reply)

    def _setup(self) -> WorkerInfo:
        reply = self._request(
            {
                "op": "setup",
                "stmt": self.benchmark.stmt,
                "setup": self.benchmark.setup,
                "scope": self.scope,
            },
            # imports (torch ...) and tool start-up (valgrind) can take long
            timeout_s=max(self.timeout_s, STARTUP_TIMEOUT_S),
        )
        checked = self._request({"op": "check"})
        synchronised = checked.get("device_synchronised")
        return WorkerInfo(
            pid=int(reply["pid"]),
            python_version=str(reply["python"]),
            implementation=str(reply["implementation"]),
            executable=str(reply["executable"]),
            device_synchronised=None if synchronised is None else str(synchronised),
            device_runtimes=tuple(str(name) for name in checked.get("device_runtimes", ())),
        )

    def calibrate(self, target_ns: int) -> int:
        """The loop count whose sample lasts at least `target_ns`."""
        return int(self._request({"op": "calibrate", "target_ns": target_ns})["loops"])

    def sample(
        self,
        loops: int,
        *,
        empty: bool = False,
        on_region_start: Callable[[], None] | None = None,
        on_region_end: Callable[[], None] | None = None,
        timed: bool = True,
    ) -> WorkerSample:
        """Time `loops` iterations (of `pass` when `empty`). The callbacks run just before and
        just after the timed loop, while the worker waits; use them to switch a tool on and off.
        `timed=False`: the loop runs untimed and the worker reads and encodes no number that
        depends on time (wall_ns 0, the rest None), so what it allocates is the same in every
        process: instruction counts depend on the allocators' state."""
        handshake = on_region_start is not None or on_region_end is not None
        request: dict[str, object] = {
            "op": "sample",
            "loops": loops,
            "empty": empty,
            "handshake": handshake,
        }
        if not timed:
            request["timed"] = False
        self._send(request)
        if handshake:
            self._around_region(on_region_start, on_region_end)
        reply = self._receive()
        if not reply.get("ok"):
            raise self.failure(reply)
        return WorkerSample(
            wall_ns=int(reply["wall_ns"]),
            cpu=reply.get("cpu"),
            involuntary_switches=reply.get("nivcsw"),
            run_queue_ns=reply.get("run_queue_ns"),
            cpu_ns=reply.get("cpu_ns"),
        )

    def _around_region(
        self, on_start: Callable[[], None] | None, on_end: Callable[[], None] | None
    ) -> None:
        """The handshake around the timed loop: the worker says it is ready, `on_start` runs,
        the loop runs, the worker says it is done, `on_end` runs, then it replies."""
        ready = self._receive()
        if not ready.get("ready"):
            raise self.failure(ready)
        if on_start is not None:
            on_start()
        self._send({"op": "go"})
        done = self._receive()
        if not done.get("done"):
            raise self.failure(done)
        if on_end is not None:
            on_end()
        self._send({"op": "end"})

    def pin(self, cpu: int) -> None:
        """Move the worker (every thread of it) onto `cpu`: for a worker started elsewhere."""
        self._send({"op": "pin", "cpu": cpu})
        reply = self._receive()
        if not reply.get("ok"):
            raise self.failure(reply)

    def close(self, timeout_s: float = 30.0) -> int | None:
        """Ask the worker to exit and wait for it (a wrapping tool may write its output then).
        The worker stops what the benchmark started and left running, and says how many; what
        escaped it (a worker killed, a tool's own children) is stopped here. Once: a second
        call (after `abandon`) returns how it ended."""
        if self._closed:
            return self.process.returncode
        self._closed = True
        if self.process.poll() is None:
            deadline = time.monotonic() + timeout_s
            try:
                self._send({"op": "quit"})
            except BenchmarkFailedError:
                pass
            else:
                self.leftover_processes += count_stopped_at_quit(self.process, timeout_s)
            if self.process.wait(timeout_s=max(0.0, deadline - time.monotonic())) is None:
                self.kill()
        self.leftover_processes += self.process.stop_leftovers()
        self._failures.stop_draining()
        self.process.close()
        return self.process.returncode

    def kill(self) -> None:
        """Kill the worker and everything it started, at once."""
        self.process.kill()

    def abandon(self, error: BaseException) -> None:
        """Stop the worker after the code using it failed with `error` (`close` still follows).
        A benchmark's failure while the worker waits for its next request (a set-up or a
        statement that raised) asks it to quit: the worker, the subreaper of what its set-up
        started, then stops it all, a daemon that left the session and cleared its environment
        included, which nothing else finds unless perflab's own process adopts orphans (the
        perflab command does; the Python API in a host program does not). Anything else (an
        interrupt, a worker in the middle of a request) kills it at once."""
        if isinstance(error, BenchmarkFailedError) and self._idle and self.process.poll() is None:
            self.close(timeout_s=QUIT_AFTER_FAILURE_S)
        else:
            self.kill()

    def __enter__(self) -> StatementWorker:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, *exc: object
    ) -> None:
        if error is not None:
            self.abandon(error)  # failed: a worker mid-sample is not waited for
        self.close()
