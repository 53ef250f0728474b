"""The profile lens's name (lenses/profile/metric.py): the one its descriptor and package export,
and the public spelling `Metric.PROFILE`."""

from __future__ import annotations

from perflab.lenses.profile import DESCRIPTOR, PROFILE
from perflab.records.kinds import Metric


def test_the_lens_is_named_profile_once() -> None:
    assert PROFILE == Metric("profile")
    assert DESCRIPTOR.metric is PROFILE
    assert Metric.PROFILE is PROFILE
