"""The track lens's section: its verdict table, a larger value 'higher' rather than 'slower'."""

from __future__ import annotations

from perflab.lenses.fragments import SectionInput, verdict_table
from perflab.records.document import Section


def section(view: SectionInput) -> Section:
    """The track lens's report section: the verdict table of the tracked values."""
    table = verdict_table(
        view.comparisons,
        cross_run=view.cross_run,
        amount=lambda c: True,  # a value: more is higher, not slower
    )
    return Section("track", (table,), key="track")
