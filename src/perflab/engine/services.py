"""What a run is measured through, as one record the engine's entry points take. It holds the
process seam, the progress shown, the clock budgets are spent by, the defaults of variants
(their interpreter, the build cache of git= ones) and what outlives one run (the machine speeds
measured lately), so a test replaces any of them with a fake."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perflab.engine.benchmark_plan import SpeedsMeasured
from perflab.machine.proc import ProcessRunner, SubprocessRunner
from perflab.measure.lens import NullProgress, ProgressReporter


@dataclass(frozen=True, kw_only=True)
class RunServices:
    """What a run reaches the outside through; every field has the real one as its default."""

    # every process the run starts goes through it: a test passes a FakeRunner
    runner: ProcessRunner = field(default_factory=SubprocessRunner)
    # told what each benchmark and lens is doing, and the part of its budget spent
    progress: ProgressReporter = field(default_factory=NullProgress)
    # seconds; the budgets are spent by it, so a fake one spends no real time
    clock: Callable[[], float] = time.monotonic
    # `clock` (time.monotonic()) when the process running perflab started: its start-up counts
    # in the first benchmark's budget, as the user waits for it (None: it does not count)
    started_at_s: float | None = None
    # the interpreter of variants without their own python= (None: the one running perflab)
    default_python: str | None = None
    # where git= variants' checkouts and builds are kept (None: the default build cache)
    cache_dir: str | Path | None = None
    # the machine speeds measured lately, which the next run on the same CPU reuses: a caller
    # that makes several runs (a workflow's steps, a cluster node's cells) passes each the same
    speeds: SpeedsMeasured = field(default_factory=SpeedsMeasured)
