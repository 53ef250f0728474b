"""The track lens's cost model (lenses/track/cost.py): a fresh worker per variant and
generation, its set-up and two calls of the statement."""

from __future__ import annotations

import pytest

from perflab.lenses.track.cost import TRACK_GENERATIONS, generations_of, track_cost
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK


def test_the_track_lens_pays_for_fresh_workers() -> None:
    cost = track_cost(QUICK, Settings(min_generations=1))
    per_worker_s = QUICK.startup_s + 2 * QUICK.sample_s
    assert cost.minimum_s == pytest.approx(TRACK_GENERATIONS * 2 * per_worker_s)
    assert cost.needs == f"{TRACK_GENERATIONS} generations of 2 workers"
    assert not cost.elastic


def test_more_generations_where_the_settings_ask_for_them() -> None:
    assert generations_of(Settings(min_generations=9)) == 9
