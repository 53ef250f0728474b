"""The measuring CPU: which one a run measures on, locked against other perflab runs, with
perflab itself kept off it; and the notes that say when another run shared it."""

from __future__ import annotations

import os
from collections.abc import Iterable

from perflab.lenses.registry import DESCRIPTORS, descriptor_for
from perflab.machine import cpu_lock
from perflab.machine.host import default_measurement_cpu, online_cpus, process_command
from perflab.measure.lens import ProgressReporter
from perflab.records.errors import ConfigError
from perflab.records.model import Experiment, Note, Severity
from perflab.store import RunSink


def measurement_cpu(experiment: Experiment) -> int | None:
    """The CPU the lenses measure on; None when the run is not pinned. Raises ConfigError for a CPU
    perflab cannot use."""
    settings = experiment.settings
    if not settings.pin:
        return None
    cpu = default_measurement_cpu() if settings.cpu is None else settings.cpu
    if cpu not in online_cpus():
        raise ConfigError(
            f"CPU {cpu} is not available to perflab (available: {online_cpus()})",
            hint="choose --cpu from the available ones, or --no-pin",
        )
    return cpu


class OrchestratorOffCpu:
    """Keep perflab itself off the measuring CPU, where there is another one."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.saved = os.sched_getaffinity(0)

    def __enter__(self) -> None:
        others = self.saved - {self.cpu}
        if self.cpu is not None and others:
            os.sched_setaffinity(0, others)

    def __exit__(self, *exc: object) -> None:
        os.sched_setaffinity(0, self.saved)


def kept_off_cpu(experiment: Experiment, cpu: int | None) -> int | None:
    """The CPU perflab keeps itself off while it measures (`OrchestratorOffCpu`): the measuring
    one where a lens needs it quiet; none where every lens counts what no load changes
    (instructions, simulated caches), so that perflab's own work (reading callgrind's dumps)
    runs on whichever CPU is free rather than beside the counting on the others only."""
    return cpu if needs_quiet_cpu(experiment) else None


def needs_quiet_cpu(experiment: Experiment) -> bool:
    """Whether a lens of the run measures something a busy measuring CPU changes (wall time,
    hardware counters); instruction counts, simulated caches and disassembly do not."""
    return any(descriptor_for(m).planning.needs_quiet_cpu for m in experiment.settings.metrics)


def _holders(pids: Iterable[int]) -> str:
    """Other perflab runs, in words: "perflab pid 123 (`perflab run ...`)"."""
    described = []
    for pid in pids:
        command = process_command(pid)
        described.append(
            f"perflab pid {pid or '?'}" + (f" (`{command}`)" if command is not None else "")
        )
    return ", ".join(described)


def claim_measurement_cpu(
    experiment: Experiment, progress: ProgressReporter
) -> cpu_lock.CpuClaim | None:
    """Lock the measuring CPU against other perflab runs (machine/cpu_lock.py): the default one,
    else another free one; with --cpu that one, shared if another run holds it. None: no pinning.
    A run whose lenses do not need a quiet CPU takes a free one if there is one and never waits.
    """
    cpu = measurement_cpu(experiment)
    if cpu is None:
        return None
    preferred = [cpu] + [c for c in reversed(online_cpus()) if c != cpu]
    first = experiment.benchmarks[0].name if experiment.benchmarks else ""
    # the progress line is the first lens's, as the run's first step is
    metric = next(iter(experiment.settings.metrics), DESCRIPTORS[0].metric)

    def waiting(held: dict[int, int], left_s: float) -> None:
        holders = ", ".join(f"CPU {c}: {_holders([pid])}" for c, pid in sorted(held.items()))
        progress.update(
            benchmark=first,
            metric=metric,
            detail=f"waiting for a CPU no other perflab run measures on ({holders}); "
            f"≤{left_s:.0f} s, then sharing CPU {cpu}; the wait is not counted in the budget",
        )

    return cpu_lock.claim_cpu(
        preferred,
        forced=experiment.settings.cpu is not None,
        waiting=cpu_lock.Waiting(
            cpu_lock.WAIT_S if needs_quiet_cpu(experiment) else 0.0, on_wait=waiting
        ),
    )


def note_cpu_claim(writer: RunSink, claim: cpu_lock.CpuClaim | None, quiet: bool) -> None:
    """Say when another perflab run measured on the same CPU, or when this one waited (who
    held the CPUs, how long; the wait is not charged to the budget). `quiet`: a lens of the
    run needs a quiet CPU (else sharing one changes none of its results)."""
    if claim is None:
        return
    if claim.shared_with and not quiet:
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"CPU {claim.cpu} was shared with another perflab run, "
                f"{_holders(claim.shared_with)}: these lenses' results do not depend on a "
                "quiet CPU, so this run did not wait for one",
            )
        )
    elif claim.shared_with:
        writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"these results share CPU {claim.cpu} with another perflab run, "
                f"{_holders(claim.shared_with)}, which was measuring on it when this run "
                "started"
                + (
                    f", after waiting {claim.waited_s:.1f} s for a free CPU (not counted in "
                    "the budget)"
                    if claim.waited_s >= 0.1
                    else ""
                )
                + ": while both ran, they took turns on the CPU",
                hint=cpu_lock.SHARED_CPU_HINT,
            )
        )
    elif claim.waited_s >= 1.0:
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"waited {claim.waited_s:.0f} s for CPU {claim.cpu}: other perflab "
                f"runs were measuring on every CPU ({_holders(claim.waited_for)}); the wait "
                "is not counted in the budget",
                hint=cpu_lock.SHARED_CPU_HINT,
            )
        )


def note_joiners(writer: RunSink, claim: cpu_lock.CpuClaim | None, quiet: bool) -> None:
    """Say when another perflab run shared the CPU this run held (it could not wait).
    `quiet`: a lens of the run needs a quiet CPU; else sharing it changed no result, and a
    warning about it would be noise (instruction counts, bisect steps, CI checks)."""
    if claim is None or claim.lock is None or not quiet:
        return
    others = cpu_lock.joined(claim.cpu, claim.lock.since_s)
    if others:
        who = ", ".join(f"pid {p}" for p in others)
        writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"another perflab run ({who}) measured on CPU {claim.cpu} while this "
                "run held it: while both ran, they took turns on the CPU",
                hint=cpu_lock.SHARED_CPU_HINT,
            )
        )


def note_turns(writer: RunSink, turns: cpu_lock.CpuTurns, quiet: bool) -> None:
    """Say when this run took turns on its CPU with other perflab runs, and how long it waited
    for them (machine/cpu_lock.py, CpuTurns). `quiet`: as for note_joiners (not needed: the
    turns changed no result, so they are not said)."""
    if not quiet or (not turns.partners and not turns.waited_turns):
        return
    writer.add_note(
        Note(
            severity=Severity.INFO,
            message=f"took turns on CPU {turns.cpu} with another perflab run"
            + (f", {_holders(sorted(turns.partners))}" if turns.partners else "")
            + ", one sample block at a time: waited "
            f"{turns.waited_s:.1f} s for {turns.waited_turns} of its {turns.turns} turns (not "
            "counted in the budget); no sample of either run was taken while the other sampled",
            hint=cpu_lock.SHARED_CPU_HINT,
        )
    )
