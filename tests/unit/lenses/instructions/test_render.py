"""The instructions lens's section: what each row counts per iteration, and its footnotes."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput
from perflab.lenses.instructions.render import NEGATIVE_FOOTNOTE
from perflab.lenses.instructions.render import section as instructions_section
from perflab.records.document import Paragraph, Table
from perflab.records.kinds import Metric, Verdict
from tests.support.lens_sections import EXPERIMENT, cells, comparison


def test_cache_simulation_rows_say_which_misses_per_iteration() -> None:
    view = SectionInput(
        Metric.INSTRUCTIONS,
        (
            comparison(Metric.INSTRUCTIONS, None, "instructions", Verdict.SLOWER),
            comparison(Metric.INSTRUCTIONS, "D1_misses", "misses", Verdict.SLOWER),
            comparison(Metric.INSTRUCTIONS, "LL_misses", "misses", Verdict.FASTER),
        ),
        EXPERIMENT,
    )
    table = instructions_section(view).blocks[0]
    assert isinstance(table, Table)
    assert cells(table, "event") == [
        "instructions per iteration",
        "D1 misses per iteration",
        "LL misses per iteration",
    ]
    assert cells(table, "variant")[1] == "2.50"
    assert cells(table, "verdict") == ["slower", "higher", "lower"]


def test_negative_counts_after_the_empty_loop_get_a_footnote() -> None:
    functions = [
        {"name": "_PyFrame_Push", "object": "python", "baseline": -0.39, "variant": -1.95,
         "delta": -1.56, "presence": "both"},
    ]  # fmt: skip
    view = SectionInput(
        Metric.INSTRUCTIONS,
        (
            comparison(
                Metric.INSTRUCTIONS, None, "instructions", Verdict.SLOWER, functions=functions
            ),
        ),
        EXPERIMENT,
    )
    (detail,) = instructions_section(view).subsections
    paragraphs = [b.text for b in detail.blocks if isinstance(b, Paragraph)]
    assert any(NEGATIVE_FOOTNOTE in text for text in paragraphs)
