"""The engine: plan -> run -> store (run.py, with what runs before measuring in prepare/); the
analysis a run ends with is perflab.analyse's."""

from typing import TYPE_CHECKING

from perflab.compat import moved
from perflab.engine.cpu import claim_measurement_cpu, measurement_cpu, needs_quiet_cpu
from perflab.engine.run import check_paths, run_experiment
from perflab.engine.services import RunServices

if TYPE_CHECKING:  # the old path perflab.compat keeps, typed for checkers
    from perflab.records.results import RunResult as RunResult


def __getattr__(name: str) -> object:
    return moved(__name__, name)  # an old import path (perflab.compat)


__all__ = [
    "RunResult",
    "RunServices",
    "check_paths",
    "claim_measurement_cpu",
    "measurement_cpu",
    "needs_quiet_cpu",
    "run_experiment",
]
