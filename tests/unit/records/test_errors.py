"""Errors as data (records/errors.py): where it happened, what went wrong, the tool's own output
and the fix, in that order; the exit status by kind; several variants' failures as one."""

from __future__ import annotations

import pytest

from perflab.records.errors import (
    BenchmarkFailedError,
    ConfigError,
    PerflabError,
    RunInterrupted,
    StoreDamagedError,
    StoreError,
    ToolUnavailableError,
    VariantsFailed,
)


def test_an_error_says_where_what_the_output_and_the_fix() -> None:
    error = PerflabError(
        "the statement raised",
        hint="fix the statement",
        variant="B",
        benchmark="parse",
        detail="Traceback ...\nValueError: x\n",
    )
    assert str(error) == (
        "benchmark 'parse', variant 'B': the statement raised\n"
        "Traceback ...\nValueError: x\n"
        "hint: fix the statement"
    )
    assert str(PerflabError("plain")) == "plain" and PerflabError("plain").where() == ""


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (PerflabError, 2),
        (ConfigError, 2),
        (ToolUnavailableError, 2),
        (StoreError, 2),
        (StoreDamagedError, 2),
        (BenchmarkFailedError, 3),
        (VariantsFailed, 3),
    ],
)
def test_the_exit_status_says_the_kind_of_failure(kind: type[PerflabError], status: int) -> None:
    assert kind.exit_code == status


def test_several_variants_failures_are_one_error_that_keeps_each() -> None:
    failures = [
        BenchmarkFailedError("exited 1", variant="A", benchmark="b", hint="look", detail="out"),
        BenchmarkFailedError("crashed", variant="C", benchmark="b"),
    ]
    error = VariantsFailed(failures)
    assert error.message == "A: exited 1; C: crashed"
    assert (error.benchmark, error.hint, error.detail) == ("b", "look", "out")
    assert error.failures == tuple(failures) and error.variant is None


def test_an_interrupted_run_is_a_keyboard_interrupt_that_names_what_was_kept() -> None:
    interrupted = RunInterrupted(7)
    assert isinstance(interrupted, KeyboardInterrupt) and interrupted.run_id == 7
    assert "kept as run 7" in str(interrupted)
