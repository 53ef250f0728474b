"""The instructions lens's name (lenses/instructions/metric.py): the one its descriptor and
package export, and the public spelling `Metric.INSTRUCTIONS`."""

from __future__ import annotations

from perflab.lenses.instructions import DESCRIPTOR, INSTRUCTIONS
from perflab.records.kinds import Metric


def test_the_lens_is_named_instructions_once() -> None:
    assert INSTRUCTIONS == Metric("instructions")
    assert DESCRIPTOR.metric is INSTRUCTIONS
    assert Metric.INSTRUCTIONS is INSTRUCTIONS
