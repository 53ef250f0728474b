"""The check's one line on the terminal and its comment's headline, worded in report/ alone."""

from __future__ import annotations

from types import SimpleNamespace

from perflab.records.bisect import StepOutcome, StepState
from perflab.report.workflow_formats import NAMED_REGRESSIONS, check_headline, check_line


def test_a_check_that_measured_nothing_names_its_failures_once() -> None:
    """The run's notes above the verdict hold each failure in full (a build's output, a
    checkout's error): the verdict line names the variants instead of repeating them."""
    from perflab.records.errors import BenchmarkFailedError

    failure = BenchmarkFailedError("the build 'make' of abc exited with status 2", variant="base")
    checked = SimpleNamespace(
        outcome=StepOutcome(StepState.SKIPPED, reason=f"base: {failure.message}"),
        result=SimpleNamespace(failures=(failure,)),
        disagreement=None,
        overruled=False,
        metric="instructions",
        threshold=0.01,
    )
    above = check_line(checked, failures_above=True)  # type: ignore[arg-type]
    assert above == "not measured: base failed (the reasons are in the notes above)"
    alone = check_line(checked)  # type: ignore[arg-type]
    assert "exited with status 2" in alone  # -q or a report on stdout: said here in full


def test_a_suite_s_line_and_headline_name_the_same_regressions() -> None:
    regressed = tuple(f"b{i}" for i in range(NAMED_REGRESSIONS + 2))
    checked = SimpleNamespace(
        outcome=StepOutcome(StepState.BAD, ratio=1.5, ci_low=1.4, ci_high=1.6),
        result=SimpleNamespace(
            failures=(), experiment=SimpleNamespace(benchmarks=(*regressed, "c"))
        ),
        disagreement=None,
        overruled=False,
        metric="time",
        threshold=0.02,
        regressed=regressed,
    )
    line = check_line(checked)  # type: ignore[arg-type]
    assert line.startswith("regression: 7 of 8 benchmarks more than 2.0% worse than the base")
    assert "b0, b1, b2, b3, b4 and 2 more; the worst 1.50" in line
    headline = check_headline(checked)  # type: ignore[arg-type]
    assert headline.endswith(": 7 of 8 benchmarks (b0, b1, b2, b3, b4, ...)")
