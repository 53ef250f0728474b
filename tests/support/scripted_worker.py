"""A statement worker in memory: answers the worker protocol (perflab/worker/statement_worker.py)
from a script, so a lens's measuring loop can be unit-tested with `fake_processes.FakeRunner`.

    worker = ScriptedWorker(ns_per_loop=lambda spec: 1000.0 if "X" in spec.env else 1100.0)
    runner = FakeRunner().on_spawn("statement_worker", worker)

Ops beyond the core protocol are answered by `handlers` (op -> request -> reply), as a lens's own
worker handlers would answer them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from perflab.machine.fake_processes import FakeProcess
from perflab.machine.proc import LaunchSpec

Handler = Callable[[LaunchSpec, Mapping[str, Any]], Mapping[str, Any]]


@dataclass
class ScriptedWorker:
    """A `FakeRunner` spawn script: one `FakeProcess` per worker started."""

    ns_per_loop: Callable[[LaunchSpec], float]
    handlers: Mapping[str, Handler] = field(default_factory=dict)
    cpu: int = 1
    python: str = "3.11.2"
    fail_setup: str | None = None  # a traceback: the setup raises
    lost_share: float = 0.0  # of each sample's wall time, spent waiting on the run queue
    reported_pid: int | None = None  # every worker's, else 1001, 1002 ... (a real pid's
    # /proc can be read)
    left_at_quit: int = 0  # processes the benchmark left, which the worker says it stopped
    started: int = 0
    requests: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (pid, request)

    def __call__(self, spec: LaunchSpec) -> FakeProcess:
        self.started += 1
        pid = self.reported_pid or 1000 + self.started
        pending: dict[str, Any] = {}

        def timed(loops: int, empty: bool) -> dict[str, Any]:
            ns = 5.0 if empty else self.ns_per_loop(spec)
            wall_ns = int(loops * ns)
            queued = int(wall_ns * self.lost_share)
            return {"ok": True, "wall_ns": wall_ns, "cpu": self.cpu, "nivcsw": 0,
                    "cpu_ns": wall_ns - queued, "run_queue_ns": queued}  # fmt: skip

        def replies(line: str) -> Iterator[str]:
            request: dict[str, Any] = json.loads(line)
            self.requests.append((pid, request))
            op = str(request.get("op"))
            reply: Mapping[str, Any] | None
            if op == "setup":
                reply = (
                    {"ok": False, "phase": "setup", "error": self.fail_setup}
                    if self.fail_setup
                    else {
                        "ok": True,
                        "pid": pid,
                        "python": self.python,
                        "implementation": "CPython",
                        "executable": spec.argv[0],
                    }
                )
            elif op == "check":
                reply = timed(1, False)
            elif op == "calibrate":
                loops = max(1, math.ceil(int(request["target_ns"]) / self.ns_per_loop(spec)))
                reply = {"ok": True, "loops": loops, "wall_ns": timed(loops, False)["wall_ns"]}
            elif op == "sample":
                result = timed(int(request["loops"]), bool(request.get("empty")))
                if request.get("handshake"):
                    pending["reply"] = result
                    reply = {"ready": True}
                else:
                    reply = result
            elif op == "pin":
                reply = {"ok": True, "cpu": int(request["cpu"])}
            elif op == "go":
                reply = {"done": True}
            elif op == "end":
                reply = pending.pop("reply")
            elif op == "register":
                reply = {"ok": True, "ops": sorted(self.handlers)}
            elif op == "quit":
                reply = {"left": self.left_at_quit} if self.left_at_quit else None
            elif op in self.handlers:
                reply = self.handlers[op](spec, request)
            else:
                reply = {"ok": False, "phase": "protocol", "error": f"unknown op {op!r}"}
            if reply is not None:
                yield json.dumps(reply)

        return FakeProcess(
            spec,
            replies,
            pid=pid,
            greeting=(json.dumps({"hello": "perflab-worker", "protocol": 1}),),
            exit_on=lambda line: 0 if json.loads(line).get("op") == "quit" else None,
        )
