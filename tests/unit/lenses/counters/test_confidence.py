"""The level each counters event is decided at (lenses/counters/confidence.py): the run's
confidence shared by every event of every comparison (Bonferroni)."""

from __future__ import annotations

import pytest

from perflab.lenses.counters.confidence import event_confidence


def test_one_event_of_one_comparison_is_decided_at_the_runs_level() -> None:
    assert event_confidence(0.95, 1) == pytest.approx(0.95)


def test_the_chance_of_a_false_claim_is_shared_by_events_times_comparisons() -> None:
    assert event_confidence(0.95, 10) == pytest.approx(0.995)
    assert event_confidence(0.95, 2, 5) == pytest.approx(event_confidence(0.95, 10))
    assert event_confidence(0.95, 2, 10) > event_confidence(0.95, 2, 1)


def test_no_events_or_comparisons_count_as_one() -> None:
    assert event_confidence(0.95, 0, 0) == pytest.approx(0.95)
