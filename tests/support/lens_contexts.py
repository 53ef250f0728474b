"""A lens context around scripted workers and a clock that steps: what the tests of several
lenses' measuring loops (and of measure.session) start from."""

from __future__ import annotations

import time
from collections.abc import Callable

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings

BENCH = Benchmark(name="b", stmt="f()", setup="pass")
VARIANTS = (Variant("A"), Variant("B", env={"FAST": "1"}))


class FakeClock:
    """Each reading advances 10 ms: budgets run out after a known number of steps."""

    def __init__(self) -> None:
        self.now_ns = 0

    def __call__(self) -> int:
        self.now_ns += 10_000_000
        return self.now_ns


def lens_context(
    runner: FakeRunner, settings: Settings, clock_ns: Callable[[], int] = time.monotonic_ns
) -> tuple[LensContext, MemorySink]:
    """A context on CPU 1 whose run's clock is `clock_ns` (a `FakeClock` spends the lens's share
    without waiting for it)."""
    sink = MemorySink()
    experiment = Experiment(benchmarks=(BENCH,), variants=VARIANTS, settings=settings)
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=sink,
        progress=NullProgress(),
        cpu=1,
        default_python="/usr/bin/python3",
        clock_ns=clock_ns,
    )
    return context, sink


def loop_ns(spec: LaunchSpec) -> float:
    return 800.0 if (spec.env or {}).get("FAST") == "1" else 1000.0
