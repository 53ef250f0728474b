"""A live progress line on stderr while measuring, under each benchmark's budget plan."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from perflab.records.kinds import Metric


class RichProgress:
    """The live progress bars on stderr: one task per benchmark and lens, advanced as the engine
    reports progress."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.progress = Progress(
            TextColumn("[bold]{task.fields[benchmark]}[/bold] {task.fields[metric]}"),
            BarColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.tasks: dict[tuple[str, Metric], TaskID] = {}

    def update(
        self, *, benchmark: str, metric: Metric, detail: str, fraction: float | None = None
    ) -> None:
        key = (benchmark, metric)
        if key not in self.tasks:
            self.tasks[key] = self.progress.add_task(
                detail,
                total=1.0 if fraction is not None else None,
                benchmark=benchmark,
                metric=metric.value,
            )
        self.progress.update(self.tasks[key], description=detail, completed=fraction or 0.0)

    def plan(self, *, benchmark: str, text: str, eta_s: float) -> None:
        """The benchmark's budget plan, and when it is expected to end (wall-clock time)."""
        ends = time.strftime("%H:%M:%S", time.localtime(self.clock() + eta_s))
        self.progress.console.print(
            f"{benchmark}: {text}; ETA {ends} (in {eta_s:.0f} s)",
            markup=False,
            highlight=False,
        )

    def __enter__(self) -> RichProgress:
        self.progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.progress.stop()
