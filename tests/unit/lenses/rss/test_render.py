"""The rss lens's section: higher and lower, and which measure each row is."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput
from perflab.lenses.rss import RSS
from perflab.records.document import Table
from perflab.records.kinds import Verdict
from tests.support.lens_sections import EXPERIMENT, cells, comparison


def test_the_rss_section_says_higher_and_names_the_measure() -> None:
    from perflab.lenses.rss.render import section as rss_section

    rss = RSS
    net = {"net_blocks_per_iteration": {"baseline": 0.0, "variant": 2.0}}
    view = SectionInput(
        rss,
        (
            comparison(rss, "maxrss_kb", "kB", Verdict.SLOWER, **net),
            comparison(rss, "peak_alloc_bytes", "B", Verdict.FASTER, **net),
        ),
        EXPERIMENT,
    )
    table, blocks = rss_section(view).blocks
    assert isinstance(table, Table) and isinstance(blocks, Table)
    assert cells(table, "verdict") == ["higher", "lower"]
    assert cells(table, "event") == ["peak RSS of the process", "peak allocated while the loop ran"]
    assert len(blocks.rows) == 1 and cells(blocks, "Δ") == ["+2"]
