"""What the instructions lens found the same in a pair's code (lenses/instructions/code_facts.py):
the objects byte-identical in both variants, the first few named."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.lenses.instructions.code_facts import code_facts
from perflab.records.accounting import CodeFacts
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@dataclass(frozen=True)
class Counted:
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def compared(identical: list[str] | None) -> Comparison:
    details = None if identical is None else Counted({"identical_objects": identical})
    return Comparison(
        "b", Metric.INSTRUCTIONS, "A", "B", 1.0, 1.0, 1.0, Verdict.EQUIVALENT, 1.0, 1.0,
        "instructions", details=details,
    )  # fmt: skip


def test_identical_objects_are_unchanged_the_first_four_named() -> None:
    few = code_facts(compared(["libc.so.6", "libm.so.6"]))
    assert few.unchanged == ("2 objects byte-identical in both variants (libc.so.6, libm.so.6)",)
    many = code_facts(compared([f"lib{i}.so" for i in range(6)]))
    assert many.unchanged == (
        "6 objects byte-identical in both variants (lib0.so, lib1.so, lib2.so, lib3.so ...)",
    )


def test_no_identical_objects_or_no_details_say_nothing() -> None:
    assert code_facts(compared([])) == CodeFacts()
    assert code_facts(compared(None)) == CodeFacts()
