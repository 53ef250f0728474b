"""The time lens: wall time, paired and interleaved across worker generations."""

from perflab.lenses.descriptor import LensDescriptor, Probe, ProbeFacts
from perflab.lenses.time.cost import time_cost
from perflab.records.kinds import Metric


def _probe(facts: ProbeFacts) -> Probe:
    return Probe(True, "always available")


DESCRIPTOR = LensDescriptor(
    metric=Metric.TIME,
    summary="wall time, paired and interleaved",
    render="perflab.lenses.time.render:section",
    lens="perflab.lenses.time.measure:TimeLens",
    probe=_probe,
    reports_overruns=True,  # it explains its own overruns
    cost=time_cost,
    paired_units="perflab.lenses.time.interaction:paired_units",
    wall_time=True,
    analysed_from_samples=True,
    figures="perflab.lenses.time.analyse:time_figures",
)
