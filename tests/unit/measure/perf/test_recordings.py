"""The run's store of shared perf recordings (measure/perf/recordings.py) and the recording's
progress, without processes."""

from __future__ import annotations

from perflab.budget.perf_costs import Reading
from perflab.measure.perf.recordings import (
    PerfRecordings,
    Recipe,
    RecordedProfile,
    VariantRecording,
)
from perflab.measure.perf.runs import recorded_share
from perflab.tool_drivers.perf import RecordOptions

RECIPE = Recipe(
    options=RecordOptions(),
    region_s=1.0,
    processes=2,
    max_command_runs=10,
    readings=frozenset(Reading),
    schedule="profile",
)


def _recording(event: str) -> VariantRecording:
    return VariantRecording((RecordedProfile(event, (event,), RECIPE.options.call_graph, ()),), ())


def test_the_first_reader_records_and_the_second_takes_its_reading() -> None:
    store = PerfRecordings()
    made: list[str] = []

    def record() -> dict[Reading, list[VariantRecording]]:
        made.append("recorded")
        return {reading: [_recording(reading.value)] for reading in Reading}

    leaves = store.take("b", ["a"], RECIPE, Reading.LEAVES, record)
    stacks = store.take("b", ["a"], RECIPE, Reading.CALL_GRAPHS, record)
    assert made == ["recorded"] and store.recorded == 1
    assert leaves[0].parts[0].requested_event == "leaves"
    assert stacks[0].parts[0].requested_event == "call graphs"
    # taken readings are not kept: another benchmark, or the same asked again, records anew
    store.take("b", ["a"], RECIPE, Reading.LEAVES, record)
    assert store.recorded == 2


def test_a_recording_of_no_region_is_done_at_once() -> None:
    assert recorded_share(0.0, 0.0) == 1.0
    assert recorded_share(0.25, 1.0) == 0.25
    assert recorded_share(3.0, 1.0) == 1.0
