"""The counters lens: perf stat events of the measured region."""

from perflab.lenses.counters.cost import counters_cost
from perflab.lenses.counters.metric import COUNTERS as COUNTERS
from perflab.lenses.counters.options import OPTIONS
from perflab.lenses.descriptor import Explanation, LensDescriptor, Planning, Probe, ProbeFacts


def _probe(facts: ProbeFacts) -> Probe:
    if not facts.perf_present:
        return Probe(False, "perf is missing", "sudo apt-get install linux-perf")
    if facts.perf_hardware:
        return Probe(True, "hardware and software events")
    if facts.perf_software:
        return Probe(
            True,
            "software events only; hardware events are not supported",
            "run on bare metal or a VM with a virtual PMU for cycles, instructions ...",
        )
    return Probe(False, "perf stat counts nothing", "sudo sysctl kernel.perf_event_paranoid=1")


DESCRIPTOR = LensDescriptor(
    metric=COUNTERS,
    summary="perf stat events of the measured region",
    lens="perflab.lenses.counters.measure:CountersLens",
    probe=_probe,
    render="perflab.lenses.counters.render:section",
    options=OPTIONS,
    # the contract's first version listed it in every document (docs/json-format.md)
    top_level_lists=("unavailable_events",),
    planning=Planning(cost=counters_cost),
    explanation=Explanation(
        beside_time="the counters lens counts in worker processes of its own under perf stat",
    ),
)
