"""The profile lens: perf record samples, hot symbols and a differential flame graph."""

from perflab.budget.perf_costs import CALL_GRAPH_RECORDING, Reading
from perflab.lenses.descriptor import (
    Explanation,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    SharedRecording,
)
from perflab.lenses.profile.cost import profile_cost
from perflab.lenses.profile.metric import PROFILE as PROFILE


def _probe(facts: ProbeFacts) -> Probe:
    if not facts.perf_present:
        return Probe(False, "perf is missing", "sudo apt-get install linux-perf")
    if facts.perf_sampled_event is None:
        return Probe(False, "perf record fails", "sudo sysctl kernel.perf_event_paranoid=1")
    return Probe(True, f"samples {facts.perf_sampled_event}")


DESCRIPTOR = LensDescriptor(
    metric=PROFILE,
    summary="perf record hot symbols, per-symbol deltas, flame graph",
    lens="perflab.lenses.profile.measure:ProfileLens",
    probe=_probe,
    render="perflab.lenses.profile.render:section",
    # a statement's recording, read as call graphs; the asm lens reads its sampled instructions
    planning=Planning(
        cost=profile_cost,
        shares_recording=SharedRecording(CALL_GRAPH_RECORDING, Reading.CALL_GRAPHS),
    ),
    explanation=Explanation(
        accounts="perflab.lenses.profile.account:accounting",
        claims_about_functions=True,
        beside_time="the profile lens's ratio comes from one process per variant under perf "
        "record, so it holds none of what differs between processes (memory layout, hash seed)",
    ),
)
