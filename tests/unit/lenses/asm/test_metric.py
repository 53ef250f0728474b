"""The asm lens's name (lenses/asm/metric.py): the one its descriptor and package export,
and the public spelling `Metric.ASM`."""

from __future__ import annotations

from perflab.lenses.asm import ASM, DESCRIPTOR
from perflab.records.kinds import Metric


def test_the_lens_is_named_asm_once() -> None:
    assert ASM == Metric("asm")
    assert DESCRIPTOR.metric is ASM
    assert Metric.ASM is ASM
