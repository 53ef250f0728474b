"""Fork servers (measure/fork_server.py) against a server in memory: what the parent asks a
variant's server (preload once, then a fork per worker), how a forked child is talked to as a
worker of its own, what a server that fails, falls silent or exits becomes, and the
bookkeeping of one server per variant (started lazily or all at once, stopped together)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.fork_server import ForkServerClient, ForkServers
from perflab.measure.worker_client import WorkerLaunch, WorkerOps
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.model import Benchmark, Variant

BENCH = Benchmark(name="b", stmt="f()", setup="import torch")
VARIANTS = (Variant("A"), Variant("B", python="/envs/b/python", env={"FAST": "1"}))
LAUNCH = WorkerLaunch("/usr/bin/python3", cpu=None, timeout_s=5.0)
HELLO = {"hello": "perflab-worker", "protocol": 1}


@dataclass
class _Server:
    """A `FakeRunner` spawn script: a fork server whose children answer the worker protocol on
    its channel; `preload` is its reply to the preload (None: it never answers)."""

    preload: Mapping[str, Any] | None = field(
        default_factory=lambda: {"ok": True, "modules": ["torch"], "wall_ns": 2_000_000_000}
    )
    greeting: Mapping[str, Any] = field(default_factory=lambda: HELLO)
    exit_on_fork: bool = False
    started: list[FakeProcess] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, spec: LaunchSpec) -> FakeProcess:
        child: dict[str, int] = {}

        def answer(line: str) -> Iterator[Mapping[str, Any]]:
            request = json.loads(line)
            self.requests.append(request)
            op = request["op"]
            if op == "preload" and self.preload is not None:
                yield self.preload
            elif op == "fork" and not self.exit_on_fork:
                child["pid"] = 5000 + sum(r["op"] == "fork" for r in self.requests)
                yield {**HELLO, "forked": True, "pid": child["pid"]}
            elif op == "setup":
                yield {"ok": True, "pid": child["pid"], "python": "3.12.1",
                       "implementation": "CPython", "executable": spec.argv[0]}  # fmt: skip
            elif op in ("check", "register"):
                yield {"ok": True}
            elif op == "warm":
                yield {"ok": True, "device_runtimes": ["cuda"]}
            elif op == "quit" and child:
                child["quit"] = 1  # the child's quit: the server lives on
                yield {"ok": True, "left": 0}
                yield {"ok": True, "exited": 0, "pid": child.pop("pid")}
            elif op == "quit":
                yield {"ok": True, "left": 1}

        def replies(line: str) -> Iterator[str]:
            return (json.dumps(reply) for reply in answer(line))

        def exits(line: str) -> int | None:
            op = json.loads(line)["op"]
            if op == "fork" and self.exit_on_fork:
                return 1
            return 0 if op == "quit" and not child.pop("quit", 0) else None

        process = FakeProcess(spec, replies, greeting=(json.dumps(self.greeting),), exit_on=exits)
        self.started.append(process)
        return process


def _client(server: _Server, variant: Variant = VARIANTS[0]) -> ForkServerClient:
    runner = FakeRunner().on_spawn("statement_worker", server)
    return ForkServerClient(runner, BENCH, variant, LAUNCH)


def _ops(server: _Server) -> list[str]:
    return [str(request["op"]) for request in server.requests]


def test_a_server_imports_the_setups_modules_once_and_says_what_it_loaded() -> None:
    server = _Server()
    client = _client(server)
    assert client.modules == ("torch",) and client.import_s == 2.0
    assert client.device_runtimes == () and client.forked == 0
    assert client.threads == 0  # the reply did not say: unknown
    assert client.start_cpu_s is None  # nor what its start cost in CPU
    assert server.requests == [{"op": "preload", "setup": "import torch"}]
    client.close()
    assert _ops(server) == ["preload", "quit"] and server.started[0].returncode == 0


def test_a_server_says_how_many_threads_its_imports_left_and_what_its_start_cost() -> None:
    preload = {"ok": True, "modules": ["numpy"], "wall_ns": 1, "threads": 2, "cpu_ns": 1.5e9}
    client = _client(_Server(preload=preload))
    assert client.threads == 2 and client.start_cpu_s == 1.5
    client.close()


def test_each_worker_is_a_child_forked_with_its_environment_and_padding() -> None:
    server = _Server()
    client = _client(server)
    with client.worker(env={"X": "1"}, padding=64) as first:
        assert first.pid == 5001 and first.info.python_version == "3.12.1"
    assert first.process.returncode == 0  # the server said the child exited with 0
    assert server.started[0].poll() is None  # the server lives on to fork the next
    with client.worker(ahead=2) as second:
        assert second.pid == 5002
    forks = [r for r in server.requests if r["op"] == "fork"]
    assert forks == [
        {"op": "fork", "env": {"X": "1"}, "padding": 64},
        {"op": "fork", "env": {}, "padding": 0, "ahead": 2},
    ]
    assert _ops(server)[1:6] == ["fork", "setup", "check", "quit", "fork"]
    assert client.forked == 2
    client.close()


def test_a_server_that_is_no_worker_is_killed() -> None:
    server = _Server(greeting={"hello": "someone else"})
    with pytest.raises(BenchmarkFailedError, match="did not start perflab's worker"):
        _client(server)
    assert server.started[0].returncode == -9


def test_a_failed_preload_is_the_benchmarks_error_and_kills_the_server() -> None:
    server = _Server(preload={"ok": False, "error": "ModuleNotFoundError: torch"})
    with pytest.raises(BenchmarkFailedError, match="importing the setup's modules failed") as e:
        _client(server)
    assert e.value.detail == "ModuleNotFoundError: torch" and e.value.variant == "A"
    assert server.started[0].returncode == -9


def test_a_silent_server_is_killed() -> None:
    server = _Server(preload=None)
    with pytest.raises(BenchmarkFailedError, match=r"did not answer within 120 s"):
        _client(server)
    assert server.started[0].returncode == -9


def test_a_server_that_exits_instead_of_forking_fails_the_worker() -> None:
    server = _Server(exit_on_fork=True)
    client = _client(server)
    with pytest.raises(ConfigError, match="did not start perflab's worker"):
        client.worker()
    with pytest.raises(BenchmarkFailedError, match="the fork server exited"):
        client.worker()


def test_a_lens_op_runs_in_the_server_and_what_it_initialised_is_kept() -> None:
    server = _Server()
    client = _client(server)
    reply = client.call(WorkerOps("torch", "OPS = {}"), {"op": "warm"})
    assert reply["ok"] and client.device_runtimes == ("cuda",)
    assert _ops(server) == ["preload", "register", "warm"]
    client.close()


def _servers(server: _Server) -> ForkServers:
    runner = FakeRunner().on_spawn("statement_worker", server)
    layout = {"PYTHONHASHSEED": "7", "FAST": "0"}
    return ForkServers(runner, BENCH, VARIANTS, WorkerLaunch("/usr/bin/python3", None, 5.0,
                                                             extra_env=layout))  # fmt: skip


def test_each_variant_gets_one_server_in_its_python_and_its_own_environment() -> None:
    server = _Server()
    with _servers(server) as servers:
        b = servers.server(1)
        assert servers.server(1) is b and len(server.started) == 1
        servers.started()
    b_spec, a_spec = (process.spec for process in server.started)
    assert (a_spec.argv[0], b_spec.argv[0]) == ("/usr/bin/python3", "/envs/b/python")
    assert a_spec.env["FAST"] == "0" and b_spec.env["FAST"] == "1"  # the variant's own wins
    assert a_spec.env["PYTHONHASHSEED"] == b_spec.env["PYTHONHASHSEED"] == "7"
    assert all(process.returncode == 0 for process in server.started)  # closed together


def test_servers_start_in_the_order_asked_and_one_that_fails_stops_the_others() -> None:
    started = _Server()

    def second_fails(spec: LaunchSpec) -> FakeProcess:
        if spec.argv[0] == "/usr/bin/python3":
            return _Server(preload={"ok": False, "error": "boom"})(spec)
        return started(spec)

    runner = FakeRunner().on_spawn("statement_worker", second_fails)
    servers = ForkServers(runner, BENCH, VARIANTS, LAUNCH)
    with pytest.raises(BenchmarkFailedError, match="importing the setup's modules failed"):
        servers.started(order=[1, 0])
    (b,) = started.started
    assert b.returncode == -9 and servers.forked == 0


def test_servers_that_initialised_a_gpu_runtime_must_not_fork() -> None:
    gpu = {"ok": True, "modules": ["torch"], "device_runtimes": ["cuda"]}
    with _servers(_Server(preload=gpu)) as servers:
        servers.started()
        assert servers.fork_unsafe() == {"A": ("cuda",), "B": ("cuda",)}
    with _servers(_Server()) as servers:
        servers.started()
        servers.server(0).worker().close()
        assert servers.fork_unsafe() == {} and servers.forked == 1
