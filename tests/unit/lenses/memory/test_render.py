"""The memory lens's section (lenses/memory/render.py): it says what each number is."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput
from perflab.lenses.memory import MEMORY
from perflab.lenses.memory.analyse import analyse_memory
from perflab.lenses.memory.render import section
from perflab.records.model import Experiment, Variant
from perflab.records.settings import Settings
from tests.support.memory_runs import BENCHMARK, data, stored


def _section_input() -> SectionInput:
    result = analyse_memory(
        BENCHMARK,
        ["out", "copy"],
        data(stored("out", passes=2), stored("copy", passes=3, mallocs=1, rss_kb=14_000.0)),
        Settings(),
    )
    experiment = Experiment((BENCHMARK,), (Variant("out"), Variant("copy")), Settings())
    return SectionInput(MEMORY, result.comparisons, experiment, notes=result.notes)


def test_the_section_says_what_each_number_is() -> None:
    built = section(_section_input())
    assert built.key == "memory"
    text = repr(built)
    assert "do not do the same memory work" in text
    assert "bytes brought into D1 (D1 misses × 64 B)" in text
    assert "peak RSS of the process (not per iteration)" in text
