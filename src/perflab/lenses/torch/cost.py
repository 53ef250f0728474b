"""The torch lens's cost model for the budget's plan."""

from __future__ import annotations

from perflab.budget.costs import ANALYSIS_S, CostProbe, LensCost, analysis_s
from perflab.lenses.torch.metric import TORCH
from perflab.records.settings import Settings

# the first torch.profiler session of a process initialises the profiler (about as long as
# `import torch`); forked workers pay it once, in their server (measure.py's `_warm_servers`),
# fresh ones in every generation
TORCH_PROFILER_START_S = 1.5
TORCH_BLOCKS = 3  # one warm-up and two measured profiles per generation
TORCH_PROFILE_OVERHEAD = 3.0  # a profiled sample is this much longer than a timed one
# ... and where the set-up initialised a GPU, its device tracing too, per fresh worker (fitted
# to GPU runs: bench/results/comment_figures.md)
TORCH_DEVICE_PROFILER_START_S = 6.0


def torch_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """Two generations at least (a CI needs two), up to --min-generations within its share:
    its ratio is indicative only (profiler overhead), the time lens's is the verdict."""
    n = probe.variants
    profiler_start_s = TORCH_PROFILER_START_S * probe.speed.factor
    if probe.device_runtimes:
        profiler_start_s += TORCH_DEVICE_PROFILER_START_S
    generation_s = n * (
        probe.worker_start_s
        + (0.0 if probe.fork else profiler_start_s)
        + TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * probe.sample_s
    )
    # forked: the servers' start-up (before the lens) and each server's profiler warm-up (in it)
    warm_s = n * profiler_start_s if probe.fork else 0.0
    return LensCost(
        TORCH,
        minimum_s=probe.once_s + warm_s + 2 * generation_s,
        needs=f"2 generations of {n} profiled workers",
        elastic=True,
        weight=1.0,
        forked=probe.fork,
        once_s=probe.once_s,
        after_s=analysis_s(probe, ANALYSIS_S),
    )
