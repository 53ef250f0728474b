"""The check command's verdict line names what failed once; its report link must be an http URL."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from perflab.cli.workflows.check.handler import checked_link
from perflab.records.errors import ConfigError


def test_a_check_that_measured_nothing_names_its_failures_once() -> None:
    """The run's notes above the verdict hold each failure in full (a build's output, a
    checkout's error): the verdict line names the variants instead of repeating them."""
    from perflab.cli.workflows.check.handler import check_verdict
    from perflab.records.bisect import StepOutcome, StepState
    from perflab.records.errors import BenchmarkFailedError

    failure = BenchmarkFailedError("the build 'make' of abc exited with status 2", variant="base")
    checked = SimpleNamespace(
        outcome=StepOutcome(StepState.SKIPPED, reason=f"base: {failure.message}"),
        result=SimpleNamespace(failures=(failure,)),
        disagreement=None,
        overruled=False,
        metric="instructions",
    )
    above = check_verdict(checked, 0.01, failures_above=True)  # type: ignore[arg-type]
    assert above == "not measured: base failed (the reasons are in the notes above)"
    alone = check_verdict(checked, 0.01)  # type: ignore[arg-type]
    assert "exited with status 2" in alone  # -q or a report on stdout: said here in full


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        "report.html",
        "ftp://ci.example/r.html",
        "https://",
        "https://user@ci.example/r.html",
        "https://ci.example/a b",
        "https://ci.example:port/r",
        "https://ci.example/r\n### ✅",
    ],
)
def test_a_report_link_must_be_an_http_url(link: str) -> None:
    with pytest.raises(ConfigError, match="--report-link"):
        checked_link(link)
