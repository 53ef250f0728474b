"""A slot's counts stored by the counters lens: the usable ones as samples, every requested event's
availability beside them (one perf did not print is `not counted`)."""

from __future__ import annotations

import json

from perflab.lenses.counters.availability import AVAILABILITY
from perflab.lenses.counters.metric import COUNTERS
from perflab.lenses.counters.samples import store_counts
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.sampler import Slot
from perflab.tool_output.perf_stat import Availability, EventCount
from tests.support.clocks import FakeClock
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context

SUBJECT = "perflab.lenses.counters.samples"

COUNTS = {
    "instructions": EventCount("instructions", Availability.COUNTED, 5000.0, "", 10, 1.0),
    "cycles": EventCount("cycles", Availability.NOT_SUPPORTED, None, ""),
}


def test_usable_counts_are_samples_and_every_event_s_availability_is_stored() -> None:
    context, sink = lens_context(FakeRunner(), FAST, FakeClock())
    slot = Slot(1, 2, 0, 1, warmup=False)
    store_counts(BENCH, context, slot, ["instructions", "cycles", "page-faults"], COUNTS, loops=0)
    (sample,) = sink.samples
    assert (sample.variant, sample.name, sample.value) == ("B", "instructions", 5000.0)
    assert (sample.metric, sample.loops, sample.generation, sample.position) == (COUNTERS, 1, 2, 1)
    (artifact,) = [a for a in sink.artifacts if a.kind == AVAILABILITY]
    assert artifact.generation == 2
    assert json.loads(artifact.content) == {
        "instructions": {
            "availability": "counted",
            "running_fraction": 1.0,
            "user_only": False,
            "unit": "",
        },
        "cycles": {
            "availability": "not supported",
            "running_fraction": None,
            "user_only": False,
            "unit": "",
        },
        "page-faults": {"availability": "not counted"},
    }
