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
# to GPU runs: bench/results/gpu_torch_2026-11-30.md, about 8.7 s a worker on an H200)
TORCH_DEVICE_PROFILER_START_S = 8.0


def torch_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """Two generations at least (a CI needs two), up to --min-generations within its share:
    its ratio is indicative only (profiler overhead), the time lens's is the verdict."""
    n = probe.variants
    on_device = bool(probe.device_runtimes or probe.setup_device_runtimes)
    # a server's profiler warm-up opens the device where the set-up uses one, and a process
    # that did cannot fork: fresh workers then, and no servers to start
    fork = probe.fork and not on_device
    profiler_start_s = TORCH_PROFILER_START_S * probe.speed.factor
    if on_device:
        profiler_start_s += TORCH_DEVICE_PROFILER_START_S
    generation_s = n * (
        (probe.fork_s if fork else probe.startup_s + profiler_start_s)
        + TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * probe.sample_s
    )
    # forked: the servers' start-up (before the lens) and each server's profiler warm-up (in it)
    once_s = n * probe.startup_s if fork else 0.0
    warm_s = n * profiler_start_s if fork else 0.0
    return LensCost(
        TORCH,
        minimum_s=once_s + warm_s + 2 * generation_s,
        needs=f"2 generations of {n} profiled workers",
        elastic=True,
        weight=1.0,
        forked=fork,
        once_s=once_s,
        after_s=analysis_s(probe, ANALYSIS_S),
    )
