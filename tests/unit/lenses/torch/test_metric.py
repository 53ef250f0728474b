"""The torch lens's name (lenses/torch/metric.py): the one its descriptor and package export,
and the public spelling `Metric.TORCH`."""

from __future__ import annotations

from perflab.lenses.torch import DESCRIPTOR, TORCH
from perflab.records.kinds import Metric


def test_the_lens_is_named_torch_once() -> None:
    assert TORCH == Metric("torch")
    assert DESCRIPTOR.metric is TORCH
    assert Metric.TORCH is TORCH
