"""A listing's instruction mix."""

from __future__ import annotations

from perflab.lenses.asm.summaries import instruction_mix
from tests.support.asm_listings import insn


def test_scalar_fp_is_not_vector_work() -> None:
    mix = instruction_mix([insn("addss", "xmm0, xmm1"), insn("vaddps", "ymm0, ymm0, ymm1")])
    assert (mix.scalar_fp, mix.vector) == (1, 1)
