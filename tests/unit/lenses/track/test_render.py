"""The track lens's section: a larger value is higher, not slower."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput
from perflab.lenses.track import TRACK
from perflab.lenses.track.render import section
from perflab.records.document import Table
from perflab.records.kinds import Verdict
from tests.support.lens_sections import EXPERIMENT, cells, comparison


def test_the_track_section_says_higher_and_lower() -> None:
    view = SectionInput(
        TRACK,
        (
            comparison(TRACK, None, "items", Verdict.SLOWER),
            comparison(TRACK, None, "items", Verdict.FASTER),
        ),
        EXPERIMENT,
    )
    (table,) = section(view).blocks
    assert isinstance(table, Table)
    assert cells(table, "verdict") == ["higher", "lower"]
