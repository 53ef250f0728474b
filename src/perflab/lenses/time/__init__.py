"""The time lens: wall time, paired and interleaved across worker generations."""

from perflab.lenses.descriptor import Figures, LensDescriptor, Planning, Probe, ProbeFacts
from perflab.lenses.time.cost import time_cost
from perflab.lenses.time.metric import TIME as TIME


def _probe(facts: ProbeFacts) -> Probe:
    return Probe(True, "always available")


DESCRIPTOR = LensDescriptor(
    metric=TIME,
    summary="wall time, paired and interleaved",
    lens="perflab.lenses.time.measure:TimeLens",
    probe=_probe,
    render="perflab.lenses.time.render:section",
    planning=Planning(cost=time_cost, reports_overruns=True),  # it explains its own overruns
    figures=Figures(
        wall_time=True,
        sees_region=True,
        analysed_from_samples=True,
        measures_alone=True,
        analysis="perflab.lenses.time.analyse:time_figures",
        paired_units="perflab.lenses.time.interaction:paired_units",
    ),
)
