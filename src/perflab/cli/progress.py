"""A live progress line on stderr while measuring."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from perflab.model import Metric


class RichProgress:
    def __init__(self, console: Console) -> None:
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
