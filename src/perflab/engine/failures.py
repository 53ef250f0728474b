"""A run's failures as it measures: each benchmark or variant that failed recorded once (a note,
and an error for `MeasuredRun.failures`), the failed variants marked for a lens's analysis, and
what is left to measure without them while a planned comparison remains."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import replace

from perflab.engine.run_notes import failure_note
from perflab.measure.lens import FAILED_ARTIFACT, Lens, LensContext
from perflab.records.errors import BenchmarkFailedError, PerflabError, VariantsFailed
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Severity
from perflab.store import RunSink


class RunFailures:
    """The failures of one run, in the order they came (mutable, the run's own): each said in
    a note through `writer`."""

    def __init__(self, writer: RunSink) -> None:
        self.writer = writer
        self.errors: list[BenchmarkFailedError] = []

    def add(self, benchmark: str, error: BenchmarkFailedError, lens: Lens | None) -> None:
        """A failure of the benchmark (or of one of its variants) while `lens` measured it
        (None: before any lens)."""
        self.errors.append(error)
        self.writer.add_note(failure_note(error, benchmark, lens))

    def not_prepared(self, failed: BenchmarkFailedError) -> None:
        """A variant that could not be prepared: said once however many benchmarks it misses."""
        if any(_same_failure(error, failed) for error in self.errors):
            return
        self.errors.append(failed)
        self.writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"not measured: {failed.message}"
                + (f"\n{failed.detail}" if failed.detail else ""),
                hint=failed.hint,
                variant=failed.variant,
            )
        )

    def variants_failed(
        self, benchmark: Benchmark, lens: Lens, failed: tuple[BenchmarkFailedError, ...]
    ) -> None:
        """Variants that failed under `lens`, each recorded and marked as failed for it: its
        analysis leaves them out."""
        for one in failed:
            self.add(benchmark.name, one, lens)
        reasons = {f.variant: {"reason": f.message} for f in failed if f.variant is not None}
        for name, reason in sorted(reasons.items()):
            self.writer.add_artifact(
                Artifact(benchmark.name, name, lens.metric, FAILED_ARTIFACT, json.dumps(reason))
            )

    def summary(self) -> str | None:
        """What the run's end records as its error: every failure, or None."""
        return "; ".join(describe(error) for error in self.errors) or None


def failed_variants(
    error: BenchmarkFailedError, experiment: Experiment
) -> tuple[BenchmarkFailedError, ...]:
    """The failures of single variants that `error` stands for, when the others can still be
    measured; () when it is the benchmark's own (or its only variant's)."""
    names = {v.name for v in experiment.variants}
    failed = error.failures if isinstance(error, VariantsFailed) else (error,)
    if len(names) < 2 or any(f.variant not in names for f in failed):
        return ()
    return failed


def without_failed(
    planned: Experiment, context: LensContext, failed: tuple[BenchmarkFailedError, ...]
) -> LensContext | None:
    """The context the next lenses measure in, without the failed variants; None when no
    comparison `planned` holds is left."""
    names = {f.variant for f in failed}
    left = tuple(v for v in context.experiment.variants if v.name not in names)
    if not comparable(planned, {v.name for v in left}):
        return None
    return replace(context, experiment=replace(context.experiment, variants=left))


def comparable(experiment: Experiment, names: Collection[str]) -> bool:
    """Whether the variants `names` still make a planned comparison (or are the experiment's
    one variant, measured alone)."""
    if len(experiment.variants) == 1:
        return bool(names)
    return any(a in names and b in names for a, b in experiment.comparison_pairs)


def describe(error: BaseException) -> str:
    """An error as the run's end records it."""
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    return str(error) or type(error).__name__


def _same_failure(a: PerflabError, b: PerflabError) -> bool:
    return (a.variant, a.message) == (b.variant, b.message)
