"""Decoded instructions: what they load and store, how wide their vector registers are."""

from __future__ import annotations

import pytest

from perflab.lenses.asm.disassembly import disassemble, vector_bits
from tests.support.asm_listings import insn


def test_loads_and_stores_follow_the_operand_order() -> None:
    # mov rax, [rdi]; mov [rdi], rax; add [rdi], rax; vmovaps zmmword ptr [rdi], zmm0
    code = bytes.fromhex("488b0748890748010762f17c482907")
    flags = [(i.loads, i.stores) for i in disassemble(code, 0)]
    assert flags == [(True, False), (False, True), (True, True), (False, True)]


@pytest.mark.parametrize(
    ("mnemonic", "operands", "bits"),
    [
        ("addps", "xmm0, xmm1", 128),
        ("vaddps", "ymm0, ymm1, ymmword ptr [rdi]", 256),
        ("vmovaps", "zmmword ptr [rdx + rax], zmm0", 512),
        ("kmovw", "k1, eax", 512),
        ("add", "rax, 1", 0),
    ],
)
def test_vector_width(mnemonic: str, operands: str, bits: int) -> None:
    assert vector_bits(insn(mnemonic, operands)) == bits
