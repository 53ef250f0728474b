"""The track lens's name (lenses/track/metric.py): the one its descriptor and its package export."""

from __future__ import annotations

from perflab.lenses.track import DESCRIPTOR, TRACK
from perflab.records.kinds import Metric


def test_the_lens_is_named_track_once() -> None:
    assert TRACK == Metric("track")
    assert DESCRIPTOR.metric is TRACK
