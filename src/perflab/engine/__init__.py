"""The engine: plan -> run -> store (run.py, with what runs before measuring in prepare/); the
analysis a run ends with is perflab.analyse's."""

from perflab.engine.cpu import claim_measurement_cpu, measurement_cpu, needs_quiet_cpu
from perflab.engine.run import check_paths, run_experiment
from perflab.engine.services import RunServices
from perflab.records.results import RunResult as RunResult  # re-exported: it was defined here

__all__ = [
    "RunResult",
    "RunServices",
    "check_paths",
    "claim_measurement_cpu",
    "measurement_cpu",
    "needs_quiet_cpu",
    "run_experiment",
]
