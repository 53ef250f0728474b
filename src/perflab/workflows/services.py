"""What a workflow reaches besides its runs: the repository its refs are resolved in, the clock
its answer's seconds are read from, the CI's variables and who hears each bisect step and each
history part, as one
record the workflows' functions take, so a test replaces any of them."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from perflab.git.repo import find_repository
from perflab.machine.proc import ProcessRunner
from perflab.records.bisect import BisectStep


@dataclass(frozen=True, kw_only=True)
class WorkflowServices:
    """What `bisect`, `check` and `history` reach outside their runs; every field has the real
    one as its default. Their processes (git's answers, the runs' builds and workers) go
    through `Benchmarked.runner`, which each run of the benchmark shares."""

    # the repository the refs are resolved in (None: the one around the current directory)
    repository: str | Path | None = None
    # seconds: the answer's `seconds` are read from it, so a fake one makes them exact
    clock: Callable[[], float] = time.monotonic
    # the CI's variables `check` reads: the base branch a pull request targets, a shared runner
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    # hears each bisect step as it is answered, with the number of commits on its line
    on_step: Callable[[BisectStep, int], None] | None = None
    # hears each part of a history before it is measured: (commits measured before it, its
    # commits, commits to measure in all, commits the store already held)
    on_part: Callable[[int, int, int, int], None] | None = None
    # hears each change point's direct comparison before it is measured: (before, after)
    on_confirm: Callable[[str, str], None] | None = None

    def repository_path(self, runner: ProcessRunner) -> str:
        """The repository given, else the one around the current directory (asked of git)."""
        if self.repository:
            return str(self.repository)
        return find_repository(runner, os.getcwd())
