"""The loops of a listing, and which one is hot."""

from __future__ import annotations

from perflab.lenses.asm.disassembly import AsmLine, Flow, Instruction
from perflab.lenses.asm.loops import find_loops, hot_loop


def test_hot_loop_without_costs_prefers_the_vector_loop() -> None:
    # two sibling loops: a scalar remainder and a vector main loop
    def at(
        address: int,
        mnemonic: str,
        operands: str,
        flow: Flow = Flow.NONE,
        target: int | None = None,
    ) -> AsmLine:
        return AsmLine(
            Instruction(address, 4, mnemonic, operands, flow, target), mnemonic, mnemonic
        )

    body = (
        at(0, "vaddps", "ymm0, ymm0, ymm1"),
        at(4, "jne", "0x0", Flow.BRANCH, 0),
        at(8, "add", "rax, 1"),
        at(12, "add", "rbx, 1"),
        at(16, "jne", "0x8", Flow.BRANCH, 8),
    )
    loop = hot_loop(find_loops(body))
    assert loop is not None and loop.start == 0
