"""The counters lens's section: counts where more is not slower say higher or lower."""

from __future__ import annotations

from perflab.lenses.counters.render import is_time_event
from perflab.lenses.counters.render import section as counters_section
from perflab.lenses.fragments import SectionInput
from perflab.records.document import Table
from perflab.records.kinds import Metric, Verdict
from tests.support.lens_sections import EXPERIMENT, cells, comparison


def test_counts_where_more_is_not_slower_are_higher_or_lower() -> None:
    view = SectionInput(
        Metric.COUNTERS,
        (
            comparison(Metric.COUNTERS, "context-switches", "count", Verdict.SLOWER),
            comparison(Metric.COUNTERS, "page-faults", "count", Verdict.FASTER),
            comparison(Metric.COUNTERS, "task-clock", "ns", Verdict.SLOWER),
        ),
        EXPERIMENT,
    )
    table = counters_section(view).blocks[0]
    assert isinstance(table, Table)
    assert cells(table, "verdict") == ["higher", "lower", "slower"]
    assert cells(table, "baseline")[0] == "1 per 11,110 iterations"
    assert is_time_event("cycles") and is_time_event("cpu/cycles/") and is_time_event(None)
    assert not is_time_event("cpu-migrations")
    # the JSON keeps the verdict values
    assert view.comparisons[0].to_json()["verdict"] == "slower"
