"""The memory lens: the memory work of one iteration (valgrind's cache simulation, allocator
calls) and the memory each variant needs (peak RSS, peak allocated)."""

from perflab.budget.costs import CostPart
from perflab.lenses.descriptor import (
    Figures,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    WorkerNeeds,
)
from perflab.lenses.memory.metric import MEMORY as MEMORY
from perflab.lenses.shared_options import CACHE_SIM, REGION
from perflab.records.kinds import Metric


def _probe(facts: ProbeFacts) -> Probe:
    if facts.which("valgrind") and facts.which("vgdb"):
        return Probe(True, "valgrind's cache simulation (callgrind), wait4/getrusage peak RSS")
    return Probe(
        False,
        "valgrind is missing: no simulated cache traffic (peak RSS alone: --metric rss)",
        "sudo apt-get install valgrind",
    )


DESCRIPTOR = LensDescriptor(
    metric=MEMORY,
    summary="memory traffic and allocations per iteration (cache simulation), peak RSS",
    lens="perflab.lenses.memory.measure:MemoryLens",
    probe=_probe,
    render="perflab.lenses.memory.render:section",
    also_reads=(REGION.name,),
    # callgrind's workers (measure/callgrind/count.py), then the peak-memory workers
    worker=WorkerNeeds(
        ops=("setup", "check", "calibrate", "sample", "rss_sample"),
        handlers="perflab.worker.peak_memory_ops",
    ),
    planning=Planning(
        # its cost is the instructions lens's callgrind runs with the cache simulated, one
        # variant after another, then the rss lens's workers: each priced by that lens's model;
        # the rss lens by its name, not its constant (lenses/rss: RSS): no lens imports another
        cost_parts=(
            CostPart(Metric.INSTRUCTIONS, per_variant=True, settings=((CACHE_SIM.name, True),)),
            CostPart(Metric("rss")),
        ),
        runs_valgrind=True,
        needs_quiet_cpu=False,
    ),
    figures=Figures(sees_region=True),  # its traffic is callgrind's count of the region
)
