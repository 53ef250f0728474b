"""Switching callgrind around one statement worker's counted loops. It is switched through
valgrind's client requests made by the worker itself (worker/callgrind_ops.py), or from the parent
through ``vgdb`` (each call given a time limit and asked again, up to three times, without asking
again for a dump already on disk). Here too are the worker's warm-up, the calibration of its loop
count, and its counted pairs (statement, empty loop) until their counts settle."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.machine.proc import LaunchSpec
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_STATEMENT, SAMPLE_NAME
from perflab.measure.callgrind.count_options import (
    CALIBRATION_LOOPS,
    MAX_SETTLING_REPEATS,
    CountRun,
    choose_loops,
    refining_loops,
    settled,
)
from perflab.measure.callgrind.dumps import dump_hint, read_dumps, totals_of, trigger_of
from perflab.measure.worker_client import StatementWorker
from perflab.tool_drivers.valgrind import vgdb_argv

_WARMUP_SAMPLES = 20  # CPython specialises the worker's own code after a few runs
# a vgdb call may hang on a busy machine: each is given a bounded time and asked again up to a
# few times (switches are idempotent; a dump already on disk is not asked for again)
_VGDB_TIMEOUT_S = 20.0
_VGDB_ATTEMPTS = 3
# how a worker's counted loops are switched on and off and dumped (recorded as variant info)
SWITCH_CLIENT_REQUESTS = "client requests"
SWITCH_VGDB = "vgdb"


@dataclass(frozen=True)
class StatementPlan:
    """How one worker's counted loops under callgrind are run: the loop count, the pairs counted,
    and how counting is switched."""

    loops: int
    repeats: int  # counted pairs, warm-up included
    warmup: int = 0  # the first ones, counted before the allocator's state settled
    switch: str = SWITCH_CLIENT_REQUESTS  # how the counted loops were switched and dumped
    # instrumentation on once and collection toggled around each loop (client requests only)
    toggled: bool = False
    why_not_toggled: str | None = None


class CallgrindWorkerSession:
    """Warm-up, calibration and the measured loops of one worker under callgrind."""

    def __init__(
        self,
        run: CountRun,
        worker: StatementWorker,
        directory: str,
        client_requests: bool,
        *,
        toggle: bool = False,
    ) -> None:
        self.run = run
        self.worker = worker
        self.directory = directory  # callgrind's output files (of this worker: its pid)
        self.vgdb_prefix = os.path.join(directory, "vgdb")
        self.switch = SWITCH_VGDB
        # instrumentation on once and collection toggled around each loop (client requests,
        # no cache simulation), when the process runs no other thread: set in measure()
        self.toggle = toggle and client_requests
        self.toggled = False
        self.why_not_toggled: str | None = None
        if client_requests:
            # the worker switches callgrind itself (worker/callgrind_ops.py): vgdb's ptrace
            # round trips are slow, and there are two per counted loop
            probe = worker.call({"op": "callgrind_probe"})
            if not probe.get("ok"):
                raise worker.failure(probe)
            if not probe.get("requests"):
                # checked natively before counting: falling back now would count this process
                # differently from the others
                raise run.error(
                    f"client requests do not reach callgrind in this worker: {probe.get('why')}",
                    hint="pass a variant's python= that runs the others' way, or report this",
                )
            self.switch = SWITCH_CLIENT_REQUESTS

    def vgdb(self, *commands: Sequence[str]) -> None:
        for attempt in range(_VGDB_ATTEMPTS):
            pending = [c for c in commands if attempt == 0 or not self._dumped(c)]
            command_argv = vgdb_argv(self.vgdb_prefix, self.worker.pid, pending)
            completed = self.run.context.runner.run(
                LaunchSpec(command_argv), timeout_s=_VGDB_TIMEOUT_S
            )
            if not completed.timed_out:
                break
        if not completed.ok:
            raise self.run.error(
                f"vgdb {' '.join(shlex.quote(a) for a in command_argv[3:])} "
                f"{completed.describe_failure()}",
                hint="vgdb needs ptrace on the worker (a container may forbid it: allow "
                "SYS_PTRACE or set kernel.yama.ptrace_scope=0)",
                detail=completed.stderr[-2000:],
            )

    def _dumped(self, command: Sequence[str]) -> bool:
        """A dump command whose dump is on disk (a timed-out vgdb may have done it): asking
        again would dump an empty one under the same name, which would be read last."""
        if command[0] != "dump":
            return False
        return any(
            (trigger_of(text) or "").endswith(command[1])
            for _, text in read_dumps(self.directory, self.worker.pid)
        )

    def counted(self, loops: int, *, empty: bool, hint: str) -> None:
        if self.switch == SWITCH_CLIENT_REQUESTS:
            self._requested(loops, empty=empty, hint=hint)
            return
        self.worker.sample(
            loops,
            empty=empty,
            on_region_start=lambda: self.vgdb(("instrumentation", "on")),
            on_region_end=lambda: self.vgdb(("instrumentation", "off"), ("dump", hint)),
            timed=False,
        )

    def _requested(self, loops: int, *, empty: bool, hint: str, dry: bool = False) -> None:
        """A counted loop switched and dumped by the worker itself (worker/callgrind_ops.py)."""
        request = {"op": "callgrind_sample", "loops": loops, "empty": empty, "dump": hint}
        request.update(dry=dry, collect=self.toggled)
        reply = self.worker.call(request)
        if not reply.get("ok"):
            raise self.worker.failure(reply)

    def warm_up(self) -> None:
        # the same handshake as counted samples, with nothing switched: the worker's own
        # code is specialised by CPython before anything is counted
        if self.switch == SWITCH_CLIENT_REQUESTS:
            for i in range(_WARMUP_SAMPLES):
                self._requested(1, empty=i % 2 == 0, hint="warm-up", dry=True)
            return
        for i in range(_WARMUP_SAMPLES):
            self.worker.sample(
                1,
                empty=i % 2 == 0,
                on_region_start=lambda: None,
                on_region_end=lambda: None,
                timed=False,
            )

    def measure(self, loops: int | None, repeats: int) -> StatementPlan:
        self.warm_up()
        if self.toggle:
            self._collect_only()
        if loops is None:
            loops = choose_loops(self._calibrate("perflab-calibrate", CALIBRATION_LOOPS))
            refine = refining_loops(loops)
            if refine is not None:
                loops = choose_loops(self._calibrate("perflab-calibrate-again", refine))
        repeats = max(1, repeats)
        counts: list[float] = []
        while True:
            repeat = len(counts)
            empty, stmt = dump_hint(KIND_EMPTY, repeat), dump_hint(KIND_STATEMENT, repeat)
            self.counted(loops, empty=True, hint=empty)
            self.counted(loops, empty=False, hint=stmt)
            counts.append(self._per_iteration(empty, stmt, loops))
            if len(counts) >= repeats and (
                len(counts) >= repeats + MAX_SETTLING_REPEATS or settled(counts[-2:])
            ):
                break
        if self.toggled:
            self._no_thread_started()
        # repeats before the allocator settled are warm-up (stored, not compared)
        warmup = len(counts) - repeats if settled(counts[-2:]) else 0
        return StatementPlan(
            loops, len(counts), warmup, self.switch, self.toggled, self.why_not_toggled
        )

    def _collect_only(self) -> None:
        """Instrumentation on for the rest of the worker, collection toggled around each loop
        (worker/callgrind_ops.py: callgrind_collect_only), unless the worker runs other threads."""
        reply = self.worker.call({"op": "callgrind_collect_only"})
        if not reply.get("ok"):
            raise self.worker.failure(reply)
        self.toggled = bool(reply.get("toggled"))
        self.why_not_toggled = None if self.toggled else str(reply.get("why"))

    def _no_thread_started(self) -> None:
        """Collection is the toggling thread's: a thread the statement started after the
        worker chose to toggle was counted nowhere."""
        reply = self.worker.call({"op": "callgrind_threads"})
        if not reply.get("ok"):
            raise self.worker.failure(reply)
        if reply.get("threads") != 1 or reply.get("started"):
            raise self.run.error(
                f"the statement started threads while it was counted ({reply.get('threads')} "
                f"threads at the end, {reply.get('started') or 0} Python threads started): "
                "collection was toggled in the worker's thread only, so their work was not "
                "counted",
                hint="start the statement's threads in the setup, or report this",
            )

    def _calibrate(self, name: str, loops: int) -> float:
        """Instructions per iteration from a pair of `loops`-long loops."""
        self.counted(loops, empty=True, hint=f"{name}-empty")
        self.counted(loops, empty=False, hint=f"{name}-stmt")
        return self._per_iteration(f"{name}-empty", f"{name}-stmt", loops)

    def _per_iteration(self, empty: str, stmt: str, loops: int) -> float:
        """The statement's instructions per iteration from a counted pair's dumps."""
        # the dumps are already on disk: callgrind writes them before the request (or vgdb)
        # returns
        totals: dict[str, float] = {}
        for _, text in read_dumps(self.directory, self.worker.pid):
            trigger = trigger_of(text) or ""
            for kind, hint in (("empty", empty), ("stmt", stmt)):
                if trigger.endswith(hint):
                    totals[kind] = totals_of(text)[SAMPLE_NAME]
        return (totals.get("stmt", 0.0) - totals.get("empty", 0.0)) / loops
