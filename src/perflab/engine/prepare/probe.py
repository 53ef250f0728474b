"""The probe before the budget's plan: what one benchmark's processes cost on this machine.

Statements: one fork server for the baseline (its start-up and the set-up's imports), one child
forked from it (a forked worker's start-up and set-up) and one sample calibrated to --sample-ms.
Commands: one run of the baseline's command. The probe's own time is part of the benchmark's
budget (budget/plan.py).

Beside that, the machine's speed here and now against the reference machine of the budget's
constants (`budget.MachineSpeed`): a Python process doing fixed work and, when a lens of the plan
runs valgrind, callgrind starting an interpreter. They run on a CPU other than the measuring
one while the benchmark is probed (one after the other, so they do not slow each other), or
after it when there is no other CPU. Work the caller gives (`beside`: the other variants' native
runs, engine/prepare/caches.py) then starts on that CPU, which is otherwise idle for the rest of
the probe.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from perflab.budget.costs import CostProbe
from perflab.budget.machine_speed import REFERENCE_PROGRAM, REFERENCE_RUNS, MachineSpeed
from perflab.machine.parallel import other_runs_cpus
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.measure.commands import CommandLauncher, command_argv
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import WorkerLaunch, interpreter_for, variant_environment
from perflab.records.errors import PerflabError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, Experiment
from perflab.tool_drivers.valgrind import CallgrindOptions

# the valgrind reference (about 1 s on the reference machine) is stopped after this long: a
# hung valgrind must not hold the run, and a machine 20 times slower (SLOWDOWN_RANGE) finishes
_REFERENCE_TIMEOUT_S = 60.0

# what the plan assumes when the probe itself fails (the measurement then fails the same way,
# and says why, as it did before there was a probe)
_FALLBACK_STARTUP_S = 0.1
_FALLBACK_SAMPLE_S = 0.01


def _affinity() -> set[int]:
    return os.sched_getaffinity(0)


@dataclass(frozen=True)
class ProbeHost:
    """Where probes run: the process seam, the interpreter of variants without `python=`, the
    measuring CPU, and (injectable for tests) the clock and the CPUs perflab may use."""

    runner: ProcessRunner
    default_python: str
    cpu: int | None
    clock: Callable[[], float] = time.monotonic
    allowed_cpus: Callable[[], Iterable[int]] = _affinity


def probe_benchmark(
    benchmark: Benchmark,
    experiment: Experiment,
    host: ProbeHost,
    *,
    valgrind: bool = False,
    speed: MachineSpeed | None = None,
    beside: Callable[[int | None], None] | None = None,
) -> CostProbe:
    """The benchmark's probe and the machine's speed (`valgrind`: time valgrind's reference
    too, for a plan with a lens that runs it). Their wall times together are the probe's.
    A `speed` already measured (an earlier benchmark of the run) is not measured again.
    `beside`: work started (not waited for) on the CPU beside the probe once the speed is
    measured there, or at once where it is not measured; never where no CPU is beside it."""
    runner, cpu, clock = host.runner, host.cpu, host.clock
    started = clock()
    probing = _Probing(
        benchmark=benchmark,
        experiment=experiment,
        runner=runner,
        default_python=host.default_python,
        cpu=cpu,
        clock=clock,
        started=started,
    )
    allowed = set(host.allowed_cpus())
    counting = _counting_cpus(cpu, allowed)
    cpu_beside = len(allowed) > 1
    other_cpu = reference_cpu(cpu, allowed)
    if speed is not None:
        if beside is not None and other_cpu is not False:
            beside(other_cpu)
        probe = _probe(probing)
        return replace(probe, speed=speed, counting_cpus=counting, cpu_beside=cpu_beside)
    if other_cpu is not False:
        background = _SpeedInBackground(runner, valgrind=valgrind, cpu=other_cpu, then=beside)
        probe = _probe(probing)
        measured = background.result()
    else:
        probe = _probe(probing)
        measured = measure_speed(runner, valgrind=valgrind, cpu=cpu)
    return replace(
        probe,
        speed=measured,
        probe_s=clock() - started,
        counting_cpus=counting,
        cpu_beside=cpu_beside,
    )


def _counting_cpus(cpu: int | None, allowed: set[int]) -> int:
    """How many CPUs valgrind's processes may count on side by side (lenses/instructions,
    machine/parallel.py): perflab's, the measuring one included, less those other
    perflab runs measure on now; at least one (they then run one after another)."""
    cpus = allowed | ({cpu} if cpu is not None else set())
    return max(1, len(cpus - set(other_runs_cpus(sorted(cpus)))))


def reference_cpu(cpu: int | None, allowed: set[int]) -> int | None | Literal[False]:
    """Where the reference runs beside the benchmark's probe: another CPU than the measuring
    one that no other perflab run measures on, unpinned when nothing is pinned and there are
    two CPUs or more; False: on no such CPU (after the probe, on its CPU: on another run's, it
    would slow that run's measurement, and be slowed by it)."""
    if cpu is None:
        return None if len(allowed) >= 2 else False
    others = sorted(allowed - {cpu})
    held = set(other_runs_cpus(others))
    return next((c for c in others if c not in held), False)


@dataclass(frozen=True, kw_only=True)
class _Probing:
    """One benchmark's probe: what it runs, where, and when it started (its clock's reading)."""

    benchmark: Benchmark
    experiment: Experiment
    runner: ProcessRunner
    default_python: str
    cpu: int | None
    clock: Callable[[], float]
    started: float


def _probe(probing: _Probing) -> CostProbe:
    variants = len(probing.experiment.variants)
    clock, started = probing.clock, probing.started
    try:
        if probing.benchmark.kind is BenchmarkKind.COMMAND:
            sample_s = _probe_command(probing)
            # a run as long as the budget says enough: the minimum of several cannot fit
            return CostProbe(
                kind=BenchmarkKind.COMMAND,
                variants=variants,
                startup_s=0.0,
                import_s=0.0,
                fork_s=0.0,
                sample_s=sample_s,
                probe_s=clock() - started,
            )
        return _probe_statement(probing)
    except PerflabError:
        return CostProbe(
            kind=probing.benchmark.kind,
            variants=variants,
            startup_s=_FALLBACK_STARTUP_S,
            import_s=0.0,
            fork_s=_FALLBACK_STARTUP_S,
            sample_s=_FALLBACK_SAMPLE_S,
            probe_s=clock() - started,
            failed=True,
        )


def _probe_statement(probing: _Probing) -> CostProbe:
    experiment, clock, started = probing.experiment, probing.clock, probing.started
    settings = experiment.settings
    server = ForkServerClient(
        probing.runner,
        probing.benchmark,
        experiment.baseline,
        WorkerLaunch(
            interpreter_for(experiment.baseline, probing.default_python),
            cpu=probing.cpu,
            timeout_s=settings.sample_timeout_s,
        ),
    )
    try:
        import_s = server.import_s
        server_s = clock() - started
        forked = clock()
        with server.worker() as worker:
            fork_s = clock() - forked
            setup_device_runtimes = worker.info.device_runtimes
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
        device_runtimes=server.device_runtimes,
        setup_device_runtimes=setup_device_runtimes,
    )


def _probe_command(probing: _Probing) -> float:
    """One run through the command launcher the measurement uses: it stops what the command
    leaves behind. (Run directly, a child that escaped into its own session held the output
    pipes open, and the probe waited for it.)"""
    benchmark, experiment = probing.benchmark, probing.experiment
    variant = experiment.baseline
    with CommandLauncher(probing.runner, cpu=probing.cpu) as launcher:
        run = launcher.run(
            command_argv(benchmark.command_for(variant), shell=experiment.settings.shell),
            env=variant_environment(variant),
            cwd=variant.cwd,
            # longer than the budget tells the plan enough (several runs cannot fit); the
            # measurement itself still allows --sample-timeout
            timeout_s=min(experiment.settings.sample_timeout_s, experiment.settings.budget_s),
            variant=variant.name,
            benchmark=benchmark.name,
        )
    return run.wall_ns / 1e9


def measure_speed(runner: ProcessRunner, *, valgrind: bool, cpu: int | None) -> MachineSpeed:
    """The reference runs, one after the other (budget.MachineSpeed); a run that fails (no
    valgrind) is not measured, and the plan then uses what was."""
    python = sys.executable
    # the median of a few: one short run may fall in a quiet moment, or a busy one
    runs = [
        runner.run(
            LaunchSpec((python, "-I", "-S", "-c", REFERENCE_PROGRAM), cpu=cpu),
            timeout_s=_REFERENCE_TIMEOUT_S,
        )
        for _ in range(REFERENCE_RUNS)
    ]
    timed = sorted((run.wall_ns, run.stdout) for run in runs if run.ok)
    reference_s = reference_cpu_s = None
    if timed:
        wall_ns, stdout = timed[len(timed) // 2]
        reference_s = wall_ns / 1e9
        try:
            reference_cpu_s = float(stdout.split()[-1])
        except (ValueError, IndexError):
            reference_cpu_s = None
    valgrind_s = None
    if valgrind and runner.which("valgrind") is not None:
        # as the instructions lens starts its workers: callgrind, instrumentation off
        idle = CallgrindOptions(
            out_file="/dev/null",
            instr_at_start=False,
            vgdb_prefix=None,
            cache_sim=False,
            dump_instr=False,
        )
        started = runner.run(
            LaunchSpec(idle.command(python, "-I", "-S", "-c", "pass"), cpu=cpu),
            timeout_s=_REFERENCE_TIMEOUT_S,
        )
        valgrind_s = started.wall_ns / 1e9 if started.ok else None
    return MachineSpeed(reference_s, reference_cpu_s, valgrind_s)


class _SpeedInBackground:
    """`measure_speed` in a thread of its own, while the benchmark is probed; `then` started on
    the same CPU once it is measured."""

    def __init__(
        self,
        runner: ProcessRunner,
        *,
        valgrind: bool,
        cpu: int | None,
        then: Callable[[int | None], None] | None = None,
    ) -> None:
        self._speed = MachineSpeed()
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(runner, valgrind, cpu, then), name="perflab-speed", daemon=True
        )
        self._thread.start()

    def _run(
        self,
        runner: ProcessRunner,
        valgrind: bool,
        cpu: int | None,
        then: Callable[[int | None], None] | None,
    ) -> None:
        try:
            self._speed = measure_speed(runner, valgrind=valgrind, cpu=cpu)
            if then is not None:
                then(cpu)
        except BaseException as error:  # re-raised in the probing thread
            self._error = error

    def result(self) -> MachineSpeed:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._speed
