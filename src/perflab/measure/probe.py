"""The probe before the budget's plan: what one benchmark's processes cost on this machine.

Statements: one fork server for the baseline (its start-up and the set-up's imports), one child
forked from it (a forked worker's start-up and set-up) and one sample calibrated to --sample-ms.
Commands: one run of the baseline's command. The probe's own time is part of the benchmark's
budget (perflab/budget.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from perflab.budget import CostProbe
from perflab.errors import PerflabError
from perflab.measure.commands import CommandLauncher, command_argv
from perflab.measure.fork_server import ForkServer
from perflab.measure.worker_client import variant_environment
from perflab.model import Benchmark, BenchmarkKind, Experiment
from perflab.proc import ProcessRunner

# what the plan assumes when the probe itself fails (the measurement then fails the same way,
# and says why, as it did before there was a probe)
_FALLBACK_STARTUP_S = 0.1
_FALLBACK_SAMPLE_S = 0.01


def probe_benchmark(
    benchmark: Benchmark,
    experiment: Experiment,
    runner: ProcessRunner,
    *,
    default_python: str,
    cpu: int | None,
    clock: Callable[[], float] = time.monotonic,
) -> CostProbe:
    started = clock()
    variants = len(experiment.variants)
    try:
        if benchmark.kind is BenchmarkKind.COMMAND:
            sample_s = _probe_command(benchmark, experiment, runner, cpu)
            # a run as long as the budget says enough: the minimum of several cannot fit
            return CostProbe(
                BenchmarkKind.COMMAND, variants, 0.0, 0.0, 0.0, sample_s, clock() - started
            )
        return _probe_statement(benchmark, experiment, runner, default_python, cpu, clock, started)
    except PerflabError:
        return CostProbe(
            benchmark.kind,
            variants,
            _FALLBACK_STARTUP_S,
            0.0,
            _FALLBACK_STARTUP_S,
            _FALLBACK_SAMPLE_S,
            clock() - started,
            failed=True,
        )


def _probe_statement(
    benchmark: Benchmark,
    experiment: Experiment,
    runner: ProcessRunner,
    default_python: str,
    cpu: int | None,
    clock: Callable[[], float],
    started: float,
) -> CostProbe:
    settings = experiment.settings
    server = ForkServer(
        runner,
        benchmark,
        experiment.baseline,
        default_python=default_python,
        cpu=cpu,
        timeout_s=settings.sample_timeout_s,
    )
    try:
        import_s = server.import_s
        server_s = clock() - started
        forked = clock()
        with server.worker() as worker:
            fork_s = clock() - forked
            reply = worker.call(
                {"op": "calibrate", "target_ns": int(settings.sample_target_ms * 1e6)}
            )
            if not reply.get("ok"):
                raise worker.failure(reply)
            sample_s = max(int(reply["wall_ns"]), settings.sample_target_ms * 1e6) / 1e9
    except BaseException:
        server.kill()  # interrupted or failed: do not wait for it
        server.close()
        raise
    server.close()
    return CostProbe(
        BenchmarkKind.STATEMENT,
        len(experiment.variants),
        startup_s=server_s + fork_s,
        import_s=import_s,
        fork_s=fork_s,
        sample_s=sample_s,
        probe_s=clock() - started,
    )


def _probe_command(
    benchmark: Benchmark, experiment: Experiment, runner: ProcessRunner, cpu: int | None
) -> float:
    """One run through the command launcher the measurement uses: it stops what the command
    leaves behind. (Run directly, a child that escaped into its own session held the output
    pipes open, and the probe waited for it.)"""
    variant = experiment.baseline
    with CommandLauncher(runner, cpu=cpu) as launcher:
        run = launcher.run(
            command_argv(benchmark.command_for(variant)),
            env=variant_environment(variant),
            cwd=variant.cwd,
            # longer than the budget tells the plan enough (several runs cannot fit); the
            # measurement itself still allows --sample-timeout
            timeout_s=min(experiment.settings.sample_timeout_s, experiment.settings.budget_s),
            variant=variant.name,
            benchmark=benchmark.name,
        )
    return run.wall_ns / 1e9
