"""The track lens: the number a statement returns (a count, a size, a score), compared across
variants, as asv's track_ benchmarks record theirs."""

from perflab.lenses.descriptor import LensDescriptor, Planning, Probe, ProbeFacts, WorkerNeeds
from perflab.lenses.track.cost import track_cost
from perflab.lenses.track.metric import TRACK as TRACK


def _probe(facts: ProbeFacts) -> Probe:
    return Probe(True, "the statement's value, read in fresh workers")


DESCRIPTOR = LensDescriptor(
    metric=TRACK,
    summary="the number a statement returns, compared across variants",
    lens="perflab.lenses.track.measure:TrackLens",
    probe=_probe,
    render="perflab.lenses.track.render:section",
    worker=WorkerNeeds(
        ops=("setup", "check", "track_value"), handlers="perflab.lenses.track.worker_ops"
    ),
    planning=Planning(cost=track_cost, needs_quiet_cpu=False),
    suite_kinds=("track", "mem"),  # asv's track_ values, and mem_'s sizes of what they return
)
