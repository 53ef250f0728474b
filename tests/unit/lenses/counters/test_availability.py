"""Which events the counters lens could count: each reason's hint fits the machine, and the
availability stored per variant and generation is merged into each event's worst state."""

from __future__ import annotations

import json

from perflab.lenses.counters.availability import (
    AVAILABILITY,
    HostFacts,
    hint_for,
    never_counted,
    stored_availability,
)
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric
from perflab.records.model import Artifact
from perflab.tool_output.perf_stat import Availability

VM = HostFacts(hypervisor=True, paranoid=2, root=False)
METAL = HostFacts(hypervisor=False, paranoid=None, root=True)


def test_an_unsupported_event_s_hint_names_the_vm_only_on_a_vm() -> None:
    assert "VM" in hint_for(Availability.NOT_SUPPORTED, VM)
    assert "VM" not in hint_for(Availability.NOT_SUPPORTED, METAL)


def test_a_refused_event_s_hint_gives_the_paranoid_level_when_known() -> None:
    assert "perf_event_paranoid=2)" in hint_for(Availability.PERMISSION, VM)
    assert "(kernel.perf_event_paranoid" not in hint_for(Availability.PERMISSION, METAL)


def _stored(variant: str, generation: int, states: dict[str, object]) -> Artifact:
    return Artifact(
        "b", variant, Metric.COUNTERS, AVAILABILITY, json.dumps(states), generation=generation
    )


def test_each_event_keeps_its_worst_state_and_smallest_running_fraction() -> None:
    counted = {"availability": "counted", "running_fraction": 1.0, "user_only": False}
    multiplexed = {"availability": "multiplexed", "running_fraction": 0.5, "user_only": True}
    never = {"availability": "not counted"}
    data = BenchmarkData(
        (),
        (
            _stored("A", 0, {"cycles": counted, "instructions": counted}),
            _stored("B", 0, {"cycles": multiplexed, "instructions": never}),
        ),
    )
    merged = stored_availability(data, ["A", "B"])
    assert merged["cycles"]["availability"] == "multiplexed"
    assert merged["cycles"]["min_running_fraction"] == 0.5 and merged["cycles"]["user_only"]
    assert merged["instructions"]["availability"] == "not counted"
    assert merged["instructions"]["min_running_fraction"] == 1.0


def test_an_event_never_counted_is_unsupported_if_perf_ever_said_so() -> None:
    seen = {"seen": ["not counted", "not supported"]}
    assert never_counted("cycles", seen, METAL).reason is Availability.NOT_SUPPORTED
    assert never_counted("cycles", {}, METAL).reason is Availability.NOT_COUNTED
