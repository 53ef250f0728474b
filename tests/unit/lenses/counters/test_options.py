"""The counters lens's options (lenses/counters/options.py): the perf events asked for, and the
defaults counted where none are."""

from __future__ import annotations

from perflab.api import make_experiment
from perflab.lenses.counters.options import DEFAULT_EVENTS, OPTIONS, events_of, requested_events
from perflab.records.settings import Settings


def test_the_events_asked_for_or_none_for_the_lens_defaults() -> None:
    assert events_of(Settings().with_options(events=["cycles", "instructions"])) == (
        "cycles",
        "instructions",
    )
    assert events_of(Settings()) == ()
    assert [o.name for o in OPTIONS] == ["events"]


def test_a_comma_separated_list_is_the_events() -> None:
    experiment = make_experiment(
        cmd="true", variants=["A", "B"], metrics="counters", events="cycles,branches"
    )
    assert events_of(experiment.settings) == ("cycles", "branches")


def test_the_events_counted_are_those_asked_for_else_the_defaults() -> None:
    assert requested_events(Settings().with_options(events=["cycles"])) == ("cycles",)
    assert requested_events(Settings()) == DEFAULT_EVENTS
    assert {"cycles", "instructions"} <= set(DEFAULT_EVENTS)
