"""The engine: plan -> run -> store (run.py) and store -> analyse (analyse.py, outputs.py,
compare.py)."""

from perflab.engine.analyse import analyse_run, dedupe_notes, with_sections
from perflab.engine.compare import compare_runs
from perflab.engine.cpu import claim_measurement_cpu, measurement_cpu, needs_quiet_cpu
from perflab.engine.outputs import judge_outputs
from perflab.engine.run import check_paths, run_experiment
from perflab.records.results import RunResult as RunResult  # re-exported: it was defined here

__all__ = [
    "RunResult",
    "analyse_run",
    "check_paths",
    "claim_measurement_cpu",
    "compare_runs",
    "dedupe_notes",
    "judge_outputs",
    "measurement_cpu",
    "needs_quiet_cpu",
    "run_experiment",
    "with_sections",
]
