"""The live progress line (cli/progress.py): a task per benchmark and lens, updated in place,
and each benchmark's plan said with when it is expected to end."""

from __future__ import annotations

import time

from rich.console import Console

from perflab.cli.progress import RichProgress
from perflab.records.kinds import Metric


def test_a_task_per_benchmark_and_lens_updated_in_place() -> None:
    progress = RichProgress(Console(record=True, width=120, color_system=None))
    progress.update(benchmark="b", metric=Metric.TIME, detail="generation 1", fraction=0.25)
    progress.update(benchmark="b", metric=Metric.TIME, detail="generation 2", fraction=0.5)
    progress.update(benchmark="b", metric=Metric.COUNTERS, detail="starting")
    assert set(progress.tasks) == {("b", Metric.TIME), ("b", Metric.COUNTERS)}
    timed = progress.progress.tasks[progress.tasks[("b", Metric.TIME)]]
    assert (timed.description, timed.completed, timed.total) == ("generation 2", 0.5, 1.0)
    counters = progress.progress.tasks[progress.tasks[("b", Metric.COUNTERS)]]
    assert counters.total is None  # no fraction: an open-ended task


def test_the_plan_is_said_with_its_wall_clock_end() -> None:
    console = Console(record=True, width=200, color_system=None)
    noon = time.mktime((2026, 11, 29, 12, 0, 0, 0, 0, -1))
    with RichProgress(console, clock=lambda: noon) as progress:
        progress.plan(benchmark="b[n=1]", text="time 9.6 s", eta_s=90)
    assert "b[n=1]: time 9.6 s; ETA 12:01:30 (in 90 s)" in console.export_text()
