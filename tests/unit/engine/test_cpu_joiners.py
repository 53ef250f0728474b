"""Runs that joined this run's CPU are said only where they change what is measured."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support.note_sinks import NoteSink


def test_cpu_sharing_is_not_said_on_lenses_that_do_not_depend_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another run that measured on this run's CPU changes no instruction count: no warning
    that they 'took turns' there; a time run is told."""
    from perflab.engine import cpu as engine_cpu
    from perflab.machine import cpu_lock

    monkeypatch.setattr(cpu_lock, "joined", lambda cpu, since_s: (4242,))
    claim = cpu_lock.CpuClaim(cpu=1, lock=SimpleNamespace(since_s=0.0))  # type: ignore[arg-type]
    deterministic, timed = NoteSink(), NoteSink()
    engine_cpu.note_joiners(deterministic, claim, quiet=False)  # type: ignore[arg-type]
    engine_cpu.note_joiners(timed, claim, quiet=True)  # type: ignore[arg-type]
    assert deterministic.notes == []
    assert len(timed.notes) == 1 and "took turns" in str(timed.notes[0])
