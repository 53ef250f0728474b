"""What the asm lens found beside a pair's difference (lenses/asm/code_facts.py): the hot
functions with the same machine code, changes no sample landed on, and hot loops that cross
other 64-byte lines or 32-byte fetch windows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.lenses.asm.code_facts import code_facts
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@dataclass(frozen=True)
class Asm:
    """A comparison's details as the asm lens writes them."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def compared(data: dict[str, Any] | None) -> Comparison:
    return Comparison(
        "b", Metric.ASM, "A", "B", 1.0, 1.0, 1.0, Verdict.INCONCLUSIVE, 1.0, 1.0, "",
        details=None if data is None else Asm(data),
    )  # fmt: skip


def loop_row(name: str, base: tuple[int, int], variant: tuple[int, int]) -> dict[str, Any]:
    def side(span: tuple[int, int]) -> dict[str, Any]:
        return {"hot_loop": {"start_address": span[0], "end_address": span[1]}}

    return {"name": name, "ran": {"baseline": True, "variant": True},
            "baseline": side(base), "variant": side(variant)}  # fmt: skip


def test_a_loop_that_crosses_another_line_is_said_with_its_addresses() -> None:
    facts = code_facts(
        compared(
            {
                "functions": [
                    loop_row("kernel", (0x1000, 0x1030), (0x1020, 0x1050)),  # 1 line, then 2
                    loop_row("steady", (0x2000, 0x2010), (0x3000, 0x3010)),
                    {"name": "cold", "ran": {"baseline": True, "variant": False}},
                ],
                "byte_identical_functions": ["steady"],
                "changed_not_run": [{"claim": "vector_width_changed", "function": "setup"}],
            }
        )
    )
    assert facts.unchanged == ("1 of 3 hot functions the same machine code in both (asm)",)
    assert facts.changed_not_run == ("vector_width_changed: setup",)
    (misplaced,) = facts.misplaced
    assert misplaced.startswith("the hot loop of kernel crosses 1 64-byte line(s)")
    assert "(0x1000–0x102f)" in misplaced and "(0x1020–0x104f)" in misplaced


def test_loops_lying_alike_are_said_alike_and_no_details_say_nothing() -> None:
    alike = code_facts(compared({"functions": [loop_row("k", (0x1000, 0x1010), (0x3000, 0x3010))]}))
    assert alike.misplaced == () and alike.loops_compared == 1
    assert "the same 64-byte lines and 32-byte windows" in alike.placed_alike
    empty = code_facts(compared(None))
    assert empty.unchanged == () and empty.misplaced == () and empty.placed_alike == ""
