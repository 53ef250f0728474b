"""Fork servers: one process per variant imports the set-up's modules once, then forks a fresh
worker per generation (the statement worker's `preload` and `fork` ops).

Why: an expensive set-up (`import torch`) paid again by every variant in every generation
would spend most of a budget before the first sample. (The instructions lens starts two per
variant, one after the other, where one starts quickly: measure/callgrind/workers.py,
`server_groups`.)
A forked child starts with the modules loaded, runs the whole set-up again (its objects are its
own) and serves the protocol on the server's channel until it quits; the server waits for it,
then forks the next. What fork does not re-randomise: the address-space layout (ASLR is
inherited, and perflab disables it anyway) and the hash seed (fixed when the server started).
Each child therefore moves its heap and stack by a random padding, shared by all variants of a
generation as the environment padding of fresh workers is; docs/statistics.md has what this
does to A/A honesty and precision, measured.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from perflab.machine.proc import LiveProcess, ProcessRunner
from perflab.measure.worker_client import (
    STARTUP_TIMEOUT_S,
    StatementWorker,
    WorkerLaunch,
    WorkerOps,
    count_stopped_at_quit,
    interpreter_for,
)
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Variant


class ForkServerClient:
    """The parent's side of a variant's fork server process (the worker's side is
    `worker/statement_fork.py`'s `ForkServerProcess`): started once, with the set-up's modules
    imported."""

    def __init__(
        self, runner: ProcessRunner, benchmark: Benchmark, variant: Variant, launch: WorkerLaunch
    ) -> None:
        """`launch.prefix`: a tool the server runs under (valgrind ...), which its children
        stay under (fork keeps a process under valgrind; exec would need --trace-children);
        `launch.interpreter` is the variant's (`interpreter_for`)."""
        self.benchmark = benchmark
        self.variant = variant
        self.timeout_s = launch.timeout_s
        interpreter = launch.interpreter
        started = time.monotonic()
        self.process: LiveProcess = runner.spawn(launch.spec(variant))
        # the server's and its children's stderr: drained all the time (a statement that
        # prints would fill the pipe and block), its tail kept for error messages
        self._stderr_tail: deque[str] = deque(maxlen=200)
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()
        try:
            reply = self._preload(interpreter)
        except BaseException:
            self.kill()
            raise
        self.modules: tuple[str, ...] = tuple(reply.get("modules", ()))
        # GPU runtimes initialised in the server: it must not fork (CUDA fails in children)
        self.device_runtimes: tuple[str, ...] = tuple(reply.get("device_runtimes", ()))
        self.import_s = int(reply.get("wall_ns", 0)) / 1e9
        # OS threads the imports left running (OpenBLAS's ...; 0: unknown): their timing shapes
        # the heap every child inherits, so two servers of one code can differ
        self.threads = int(reply.get("threads", 0))
        # the CPU seconds its start took (a busy machine stretches the wall time, not these);
        # None from a worker too old to say
        cpu_ns = reply.get("cpu_ns")
        self.start_cpu_s: float | None = None if cpu_ns is None else int(cpu_ns) / 1e9
        self.startup_s = time.monotonic() - started
        self.forked = 0

    def _preload(self, interpreter: str) -> dict[str, Any]:
        """The server's greeting, then its import of the set-up's modules: the reply."""
        hello = self._receive(max(self.timeout_s, STARTUP_TIMEOUT_S))
        if hello.get("hello") != "perflab-worker":
            raise self._error(f"{interpreter!r} did not start perflab's worker ({hello!r})")
        self._send({"op": "preload", "setup": self.benchmark.setup})
        reply = self._receive(max(self.timeout_s, STARTUP_TIMEOUT_S))
        if not reply.get("ok"):
            raise self._error(
                "importing the setup's modules failed", detail=str(reply.get("error", ""))
            )
        return reply

    def worker(
        self,
        *,
        env: Mapping[str, str] | None = None,
        padding: int = 0,
        ops: tuple[WorkerOps, ...] = (),
        scope: str = "function",
        ahead: int = 0,
    ) -> StatementWorker:
        """A fresh child of this server, set up and ready to sample (a `StatementWorker`).
        `ahead`: this many more children are forked at the same moment and wait; the next
        calls release them instead of forking, so that every one starts from the server's
        state before the first (forked after an earlier child's exit, a child starts from a
        state that child's reply changed)."""
        request = {"op": "fork", "env": dict(env or {}), "padding": padding}
        if ahead:
            request["ahead"] = ahead
        self._send(request)
        self.forked += 1
        return StatementWorker(
            _ForkedChild(self),
            self.benchmark,
            self.variant,
            WorkerLaunch("(forked)", cpu=None, timeout_s=self.timeout_s),
            ops=ops,
            scope=scope,
        )

    def call(self, ops: WorkerOps, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run one of a lens's own ops in the server itself, before it forks (e.g. the torch
        lens warming its profiler once, for every child): registers `ops` first."""
        self._send({"op": "register", "name": ops.name, "source": ops.source})
        registered = self._receive(self.timeout_s)
        if not registered.get("ok"):
            raise self._error(
                f"the fork server could not take {ops.name}'s ops",
                detail=str(registered.get("error", "")),
            )
        self._send(dict(request))
        reply = self._receive(max(self.timeout_s, STARTUP_TIMEOUT_S))
        runtimes = set(self.device_runtimes) | set(reply.get("device_runtimes", ()))
        self.device_runtimes = tuple(sorted(runtimes))
        return reply

    def _drain_stderr(self) -> None:
        for line in self.process.stderr_lines():
            self._stderr_tail.append(line)

    def stderr_tail(self) -> str:
        return "".join(self._stderr_tail)[-4000:]

    def _send(self, message: Mapping[str, Any]) -> None:
        try:
            self.process.write_line(json.dumps(message))
        except BrokenPipeError:
            raise self._error("the fork server exited") from None

    def _receive(self, timeout_s: float) -> dict[str, Any]:
        line = self.process.read_line(timeout_s)
        if line is None:
            self.kill()
            raise self._error(f"the fork server did not answer within {timeout_s:g} s")
        if not line:
            raise self._error("the fork server exited")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _error(self, message: str, detail: str | None = None) -> BenchmarkFailedError:
        return BenchmarkFailedError(
            message,
            hint="the fork server imports the setup's modules once per variant; "
            "see the worker's error above",
            variant=self.variant.name,
            benchmark=self.benchmark.name,
            detail=detail or self.stderr_tail() or None,
        )

    def close(self, timeout_s: float = 30.0) -> None:
        """Ask the server to exit: it stops what its imports started and its children left
        (counted, as a worker's), then whatever escaped it is stopped here."""
        if self.process.poll() is None:
            deadline = time.monotonic() + timeout_s
            try:
                self.process.write_line(json.dumps({"op": "quit"}))
            except BrokenPipeError:
                pass
            else:
                count_stopped_at_quit(self.process, timeout_s)
            if self.process.wait(timeout_s=max(0.0, deadline - time.monotonic())) is None:
                self.process.kill()
        self.process.stop_leftovers()
        self._stderr_reader.join(timeout=2)
        self.process.close()

    def kill(self) -> None:
        self.process.kill()


class _ForkedChild:
    """The `LiveProcess` of a forked child: the server's channel while the child serves it."""

    def __init__(self, server: ForkServerClient) -> None:
        self.server = server
        self._pid: int | None = None
        self._returncode: int | None = None

    @property
    def pid(self) -> int:
        return self._pid if self._pid is not None else self.server.process.pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def write_line(self, line: str) -> None:
        if self._returncode is not None:
            raise BrokenPipeError
        self.server.process.write_line(line)

    def read_line(self, timeout_s: float) -> str | None:
        if self._returncode is not None:
            return ""
        line = self.server.process.read_line(timeout_s)
        if not line:
            return line
        message = _parse(line)
        if message.get("forked") and self._pid is None:
            self._pid = int(message["pid"])
        elif "exited" in message:  # the child is gone; the server says how it ended
            self._returncode = int(message["exited"])
            return ""
        return line

    def stderr_lines(self) -> Iterator[str]:
        return iter(())  # the server's: the server drains them

    def poll(self) -> int | None:
        return self._returncode

    def wait(self, timeout_s: float | None = None) -> int | None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self._returncode is None:
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return None
            line = self.server.process.read_line(min(left, 1.0))
            if line == "":
                self._returncode = -signal.SIGKILL  # the server died with its child
            elif line is not None and "exited" in _parse(line):
                self._returncode = int(_parse(line)["exited"])
        return self._returncode

    def kill(self) -> None:
        if self._returncode is None and self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if self.wait(timeout_s=10) is None:
                self.server.kill()
        elif self._returncode is None:
            self.server.kill()
            self._returncode = -signal.SIGKILL

    def stop_leftovers(self) -> int:
        return 0  # the child stops its own as it quits; what escapes it, the server's close

    def close(self) -> None:
        pass


def _parse(line: str) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return message if isinstance(message, dict) else {}


class ForkServers:
    """One fork server per variant of one benchmark, started when first asked for and shared
    by the lenses measuring it (the time and torch lenses would otherwise each import the
    set-up's modules again). All servers share one layout: a hash seed and environment
    padding, and ASLR off when the layout is paired, as the workers of a fresh generation."""

    def __init__(
        self,
        runner: ProcessRunner,
        benchmark: Benchmark,
        variants: tuple[Variant, ...],
        launch: WorkerLaunch,
    ) -> None:
        """`launch`: what every server shares (its `interpreter` the default one, a variant's
        `python=` overriding it; its `extra_env` the layout, a variant's own env overriding it)."""
        self.runner = runner
        self.benchmark = benchmark
        self.variants = variants
        self.launch = launch
        self._servers: dict[int, ForkServerClient] = {}

    def server(self, index: int) -> ForkServerClient:
        if index not in self._servers:
            variant = self.variants[index]
            layout = self.launch.extra_env or {}
            launch = replace(
                self.launch,
                interpreter=interpreter_for(variant, self.launch.interpreter),
                extra_env={k: v for k, v in layout.items() if k not in variant.env},
            )
            self._servers[index] = ForkServerClient(self.runner, self.benchmark, variant, launch)
        return self._servers[index]

    def started(self, order: Sequence[int] | None = None) -> ForkServers:
        """Every variant's server, started now (in `order` of the variants' indices, else
        theirs); if one fails to start, the others are stopped."""
        try:
            for index in range(len(self.variants)) if order is None else order:
                self.server(index)
        except BaseException:
            self.kill()
            self.close()
            raise
        return self

    def kill(self) -> None:
        """Kill every server (and with it the child it waits for) at once."""
        for server in self._servers.values():
            server.kill()

    def fork_unsafe(self) -> dict[str, tuple[str, ...]]:
        """Variant name -> the GPU runtimes its started server initialised, for every server
        that must not fork."""
        return {
            server.variant.name: server.device_runtimes
            for server in self._servers.values()
            if server.device_runtimes
        }

    @property
    def forked(self) -> int:
        """Workers forked so far, all servers together."""
        return sum(server.forked for server in self._servers.values())

    def close(self) -> None:
        servers, self._servers = self._servers, {}
        for server in servers.values():
            server.close()

    def __enter__(self) -> ForkServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
