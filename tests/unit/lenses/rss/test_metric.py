"""The rss lens's name (lenses/rss/metric.py): the one its descriptor and its package export."""

from __future__ import annotations

from perflab.lenses.rss import DESCRIPTOR, RSS
from perflab.records.kinds import Metric


def test_the_lens_is_named_rss_once() -> None:
    assert RSS == Metric("rss")
    assert DESCRIPTOR.metric is RSS
