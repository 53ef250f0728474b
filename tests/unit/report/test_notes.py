"""Notes said once: the same note for several events or benchmarks is one line with a count."""

from __future__ import annotations

from perflab.records.kinds import Metric
from perflab.records.model import Note, Severity
from perflab.report.notes import group_notes


def test_the_same_note_for_several_events_or_benchmarks_is_said_once_with_a_count() -> None:
    hint = "run on bare metal"
    notes = [
        Note(Severity.WARNING, f"event {e!r} was not measured: not supported", hint, "b", None,
             Metric.COUNTERS)
        for e in ("cycles", "instructions", "branches")
    ] + [
        Note(Severity.INFO, "sample times look bimodal", "same hint", bench, "A", Metric.TIME)
        for bench in ("b1", "b2")
    ] + [Note(Severity.WARNING, "other", hint)]  # fmt: skip
    groups = group_notes(notes)
    assert [g.count for g in groups] == [3, 1, 2]
    assert (
        groups[0].message
        == "event 'cycles', 'instructions', 'branches' was not measured: not supported"
    )
    assert groups[0].hint == hint and groups[1].hint is None  # each hint once
    assert groups[2].where == "time · b1 · A; time · b2 · A"
