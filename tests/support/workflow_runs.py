"""The results of perflab history and perflab bisect built from records, for the workflow views'
tests and snapshots."""

from __future__ import annotations

from perflab.records.bisect import BisectResult, BisectStep, Commit, StepOutcome, StepState
from perflab.records.kinds import Metric
from perflab.records.workflow_results import HistoryChange, HistoryPoint, HistoryResult

NOTE = "the history spans 2 nodes of 2 machine(s): values normalised by a reference loop"


def history_run(*, nodes: bool = True) -> HistoryResult:
    """Eight commits, the third not built, a rise at the fifth and a fall at the seventh; across
    two nodes (normalised values) or on one."""
    values = [1000.0, 1010.0, None, 1005.0, 1500.0, 1490.0, 1200.0, 1210.0]
    points = []
    for i, value in enumerate(values):
        measured = value is not None
        points.append(
            HistoryPoint(
                f"{i:02d}" + "ab" * 19,
                "make the loop | slower *a lot*" if i == 4 else f"commit number {i}",
                f"t{i}",
                value,
                "ns" if measured else "",
                run_id=i + 1 if measured else None,
                reused=i in (0, 1),
                skipped="" if measured else "the build failed: exited with status 1",
                node=("alpha" if i % 2 else "beta") if nodes and measured else "",
                normalised_value=value * (1.1 if i % 2 else 0.9)
                if nodes and value is not None
                else None,
            )
        )
    changes = (
        HistoryChange(
            index=4,
            before=points[3],
            after=points[4],
            series_ratio=1.49,
            ratio=1.5,
            ci_low=1.45,
            ci_high=1.55,
            confirmed=True,
            run_id=21,
        ),
        HistoryChange(
            index=6,
            before=points[5],
            after=points[6],
            series_ratio=0.81,
            ratio=0.8,
            ci_low=0.7,
            ci_high=1.02,
            confirmed=False,
            run_id=22,
            reused=True,
            unmeasured_between=2,
        ),
    )
    notes = (NOTE,) if nodes else ()
    return HistoryResult(
        range_text="v1.0..main",
        metric=Metric.TIME,
        threshold=0.02,
        points=tuple(points),
        changes=changes,
        measured_now=5,
        seconds=93.4,
        notes=notes,
    )


def bisect_run(*, found: bool = True) -> BisectResult:
    """Five steps over eight commits, one skipped and one inconclusive after three tries: the
    culprit found, or two candidates left."""
    line = tuple(Commit(f"{i:02d}" + "cd" * 19, f"subject {i}") for i in range(8))

    def step(index: int, outcome: StepOutcome, attempts: int = 1) -> BisectStep:
        return BisectStep(index, line[index].commit, line[index].subject, outcome, attempts)

    steps = (
        step(7, StepOutcome(StepState.BAD, 1.3, 1.25, 1.35, 31)),
        step(3, StepOutcome(StepState.SKIPPED, reason="the build failed")),
        step(4, StepOutcome(StepState.GOOD, 1.0, 0.99, 1.01, 33)),
        step(5, StepOutcome(StepState.INCONCLUSIVE, 1.02, 0.98, 1.06, 34), attempts=3),
        step(6, StepOutcome(StepState.BAD, 1.29, 1.27, 1.31, 35)),
    )
    good = Commit("ff" * 20, "the good one")
    common = (good, line[7], Metric.INSTRUCTIONS, 0.02, line, steps)
    if found:
        notes = ("measured with --each python=3.12",)
        return BisectResult(*common, line[6], (), "", 61.0, evidence_run=40, notes=notes)
    stopped = "step 6 stayed inconclusive after 3 tries"
    return BisectResult(*common, None, (line[5], line[6]), stopped, 61.0)
