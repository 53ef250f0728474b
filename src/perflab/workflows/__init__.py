"""A team's workflows over a repository's history, built on experiments of git= variants:
`bisect` (find the commit), `check` (a CI gate against the merge base) and `history` (one
result per commit, with change points). Every measurement is an ordinary run, kept in the
store; these functions plan the runs and read their comparisons."""

from __future__ import annotations

from perflab.workflows.benchmarked import (
    Benchmarked,
    Lenses,
    Suite,
    evidence_lenses,
    given_lenses,
    instructions_available,
    main_comparisons,
)
from perflab.workflows.bisect import bisect, bisect_with
from perflab.workflows.check import (
    check,
    check_with,
    default_base,
    regressed_benchmarks,
    shared_runner,
)
from perflab.workflows.history import (
    confirmed_change,
    history,
    history_with,
    measured_code,
    suite_history,
    suite_history_with,
)
from perflab.workflows.services import WorkflowServices

__all__ = [
    "Benchmarked",
    "Lenses",
    "Suite",
    "WorkflowServices",
    "bisect",
    "bisect_with",
    "check",
    "check_with",
    "confirmed_change",
    "default_base",
    "evidence_lenses",
    "given_lenses",
    "history",
    "history_with",
    "instructions_available",
    "main_comparisons",
    "measured_code",
    "regressed_benchmarks",
    "shared_runner",
    "suite_history",
    "suite_history_with",
]
