"""Switching callgrind through vgdb from the parent: a call that hangs is given a time limit and
asked again, without asking again for a dump already on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.measure.callgrind.count_options import CountRun
from perflab.measure.callgrind.switching import CallgrindWorkerSession
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant

PID = 4242


class _Worker:
    pid = PID


def _session(directory: Path, replies: list[bool], seen: list[tuple[LaunchSpec, float]]) -> Any:
    """A session whose vgdb calls time out (True) or succeed (False) in turn; a call that
    times out has still dumped what it was asked to."""

    class _Runner(FakeRunner):
        def run(
            self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
        ) -> Completed:
            seen.append((spec, timeout_s or 0.0))
            if "dump" in spec.argv:
                hint = spec.argv[spec.argv.index("dump") + 1]
                dump = directory / f"callgrind.out.{PID}.{len(seen)}"
                dump.write_text(f"desc: Trigger: Client Request: {hint}\nevents: Ir\n")
            timed_out = replies.pop(0)
            return Completed(spec.argv, None if timed_out else 0, "", "", 1, timed_out)

    benchmark, variant = Benchmark("b", stmt="pass"), Variant("a")
    context = LensContext(
        Experiment((benchmark,), (variant,)), _Runner(), MemorySink(), NullProgress(), None, "py"
    )
    run = CountRun(benchmark, variant, context, {}, Metric.INSTRUCTIONS)
    return CallgrindWorkerSession(run, _Worker(), str(directory), client_requests=False)  # type: ignore[arg-type]


def test_a_hung_vgdb_call_is_asked_again_without_its_dump(tmp_path: Path) -> None:
    seen: list[tuple[LaunchSpec, float]] = []
    session = _session(tmp_path, [True, False], seen)
    session.vgdb(("instrumentation", "off"), ("dump", "perflab-stmt-0"))
    first, again = (spec.argv[4:] for spec, _ in seen)
    assert first == ("instrumentation", "off", "-c", "dump", "perflab-stmt-0")
    assert again == ("instrumentation", "off")  # the dump is on disk: not asked twice
    assert {timeout for _, timeout in seen} == {20.0}


def test_vgdb_is_asked_three_times_at_most(tmp_path: Path) -> None:
    seen: list[tuple[LaunchSpec, float]] = []
    session = _session(tmp_path, [True, True, True], seen)
    with pytest.raises(BenchmarkFailedError, match="instrumentation on timed out"):
        session.vgdb(("instrumentation", "on"))
    assert len(seen) == 3
