"""The rss lens: peak resident memory per variant, and what one iteration allocates."""

from perflab.lenses.descriptor import (
    Figures,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    WorkerNeeds,
)
from perflab.lenses.rss.cost import rss_cost
from perflab.lenses.rss.metric import RSS as RSS


def _probe(facts: ProbeFacts) -> Probe:
    return Probe(True, "getrusage/wait4 peak RSS; tracemalloc and allocated blocks in the worker")


DESCRIPTOR = LensDescriptor(
    metric=RSS,
    summary="peak RSS per variant, memory allocated per iteration",
    lens="perflab.lenses.rss.measure:RssLens",
    probe=_probe,
    render="perflab.lenses.rss.render:section",
    worker=WorkerNeeds(
        ops=("setup", "check", "calibrate", "rss_sample"),
        handlers="perflab.worker.peak_memory_ops",
    ),
    planning=Planning(cost=rss_cost),
    figures=Figures(measures_alone=True),  # a lone variant's own peak RSS
    suite_kinds=("peakmem",),  # asv's peakmem_: the process's peak RSS
)
