"""Waiting for a CPU other perflab runs measure on: said with who held it, never charged to the
budget, and skipped by runs whose lenses do not need a quiet CPU; perflab keeps off the
measuring CPU only where a lens needs it quiet."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab import engine
from perflab.api import make_experiment
from perflab.engine.cpu import kept_off_cpu, note_cpu_claim
from perflab.machine import cpu_lock
from perflab.machine.host import online_cpus, process_command
from perflab.measure.lens import NullProgress
from perflab.records.kinds import Metric
from tests.support.note_sinks import NoteSink

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.engine.cpu"


@pytest.fixture
def every_cpu_held(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[list[cpu_lock.CpuClaim]]:
    monkeypatch.setenv(cpu_lock.LOCK_DIR_VARIABLE, str(tmp_path))
    held = [cpu_lock.claim_cpu([cpu], forced=True) for cpu in online_cpus()]
    yield held
    for claim in held:
        claim.release()


def test_a_run_of_lenses_that_need_no_quiet_cpu_never_waits(
    every_cpu_held: list[cpu_lock.CpuClaim],
) -> None:
    for metrics in (["instructions"], ["memory"], ["asm"], ["instructions", "asm"]):
        experiment = make_experiment(stmt="pass", variants=["A", "B"], metrics=metrics)
        assert not engine.needs_quiet_cpu(experiment)
        claim = engine.claim_measurement_cpu(experiment, NullProgress())
        assert claim is not None and claim.lock is None and claim.waited_s < 1.0
        assert claim.shared_with == (os.getpid(),)
        notes = NoteSink()
        note_cpu_claim(notes, claim, quiet=False)  # type: ignore[arg-type]
        (note,) = notes.notes
        assert "do not depend on a quiet CPU" in note.message and note.severity.value == "info"
    timed = make_experiment(stmt="pass", variants=["A", "B"], metrics=["time", "instructions"])
    assert engine.needs_quiet_cpu(timed)


def test_a_wait_is_said_with_who_held_the_cpu_and_not_charged_to_the_budget(
    every_cpu_held: list[cpu_lock.CpuClaim], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_lock, "WAIT_S", 0.5)
    experiment = make_experiment(stmt="pass", variants=["A", "B"], metrics=["time"])
    claim = engine.claim_measurement_cpu(experiment, NullProgress())
    assert claim is not None and claim.waited_s >= 0.5
    assert claim.waited_for == (os.getpid(),)
    notes = NoteSink()
    note_cpu_claim(notes, claim, quiet=True)  # type: ignore[arg-type]
    (note,) = notes.notes
    assert f"perflab pid {os.getpid()}" in note.message
    assert "not counted in the budget" in note.message and note.severity.value == "warning"
    command = process_command(os.getpid())
    assert command is not None and command[:20] in note.message
    # a wait of a run that got its CPU in the end: an info note, the same facts
    waited = cpu_lock.CpuClaim(1, None, waited_s=12.0, waited_for=(os.getpid(),))
    notes = NoteSink()
    note_cpu_claim(notes, waited, quiet=True)  # type: ignore[arg-type]
    (note,) = notes.notes
    assert note.message.startswith("waited 12 s for CPU 1") and "not counted" in note.message
    assert Metric.TIME in experiment.settings.metrics


def test_perflab_keeps_off_the_measuring_cpu_only_where_a_lens_needs_it_quiet() -> None:
    counted = make_experiment(stmt="pass", variants=["A", "B"], metrics="instructions")
    timed = make_experiment(stmt="pass", variants=["A", "B"], metrics="time,instructions")
    assert kept_off_cpu(timed, 1) == 1
    # counts no load changes: perflab's own work may run on the counting CPUs too
    assert kept_off_cpu(counted, 1) is None
    assert kept_off_cpu(timed, None) is None  # unpinned: no measuring CPU
