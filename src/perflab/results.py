"""The analysed run: what `engine.analyse_run` returns and what the renderers format
(terminal, JSON, Markdown, HTML).

A record module of its own, so the renderers (perflab.report) can format it without importing
the engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from perflab.document import Section
from perflab.errors import PerflabError
from perflab.model import Comparison, Experiment, Note, RunStatus, Sample


@dataclass(frozen=True)
class RunResult:
    """A run as analysed: what the renderers format."""

    run_id: int
    status: RunStatus
    created_at: str
    experiment: Experiment
    machine: dict[str, Any]
    comparisons: tuple[Comparison, ...]
    notes: tuple[Note, ...]
    variant_info: dict[str, dict[str, Any]]
    differences: tuple[str, ...]
    error: str | None = None
    top_level: dict[str, Any] = field(default_factory=dict)
    failures: tuple[PerflabError, ...] = ()  # benchmarks that failed while measuring this run
    cross_run: bool = False  # a comparison of two stored runs (perflab compare)
    # What each lens shows beyond its verdict table (built by the lenses' render modules from
    # their analysis), in the order of the experiment's metrics.
    sections: tuple[Section, ...] = ()
    # The raw samples the comparisons were derived from (for `--samples` in the JSON).
    samples: tuple[Sample, ...] = ()

    def raise_on_failure(self) -> RunResult:
        """Raise the first benchmark failure, if any (for callers that want exceptions)."""
        if self.failures:
            raise self.failures[0]
        return self
