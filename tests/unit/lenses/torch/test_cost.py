"""The torch lens's cost model (lenses/torch/cost.py): what its two generations of profiled
workers cost, fresh or forked, and on a GPU."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.costs import CostProbe
from perflab.lenses.torch.cost import (
    TORCH_BLOCKS,
    TORCH_DEVICE_PROFILER_START_S,
    TORCH_PROFILE_OVERHEAD,
    TORCH_PROFILER_START_S,
    torch_cost,
)
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings

# two variants whose set-up imports torch (2 s of a 2.1 s start): forked by default
TORCH = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=2.1,
    import_s=2.0,
    fork_s=0.05,
    sample_s=0.01,
    probe_s=0.2,
)


def profiled_s(probe: CostProbe) -> float:
    return TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * probe.sample_s


def test_fresh_workers_pay_the_profilers_start_in_every_generation() -> None:
    # imports cheap enough not to fork: every generation's workers start the profiler afresh
    fresh = dataclasses.replace(TORCH, import_s=0.1)
    assert not fresh.fork
    cost = torch_cost(fresh, Settings())
    per_worker_s = fresh.startup_s + TORCH_PROFILER_START_S + profiled_s(fresh)
    assert cost.minimum_s == pytest.approx(2 * 2 * per_worker_s)
    assert not cost.forked and cost.once_s == 0.0


def test_forked_workers_pay_the_servers_and_their_profilers_start_once() -> None:
    assert TORCH.fork
    cost = torch_cost(TORCH, Settings())
    servers_s = 2 * TORCH.startup_s + 2 * TORCH_PROFILER_START_S
    generation_s = 2 * (TORCH.fork_s + profiled_s(TORCH))
    assert cost.minimum_s == pytest.approx(servers_s + 2 * generation_s)
    assert cost.forked and cost.once_s == pytest.approx(2 * TORCH.startup_s)
    assert cost.metric == Metric.TORCH and cost.elastic
    assert cost.needs == "2 generations of 2 profiled workers"


def test_a_set_up_that_initialised_a_gpu_has_fresh_workers_and_the_device_tracing() -> None:
    # CUDA does not survive fork: every worker is fresh and starts the device's tracing too
    device = dataclasses.replace(TORCH, device_runtimes=("cuda",))
    assert not device.fork
    cost = torch_cost(device, Settings())
    per_worker_s = device.startup_s + TORCH_PROFILER_START_S + TORCH_DEVICE_PROFILER_START_S
    per_worker_s += profiled_s(device)
    assert cost.minimum_s == pytest.approx(2 * 2 * per_worker_s)
    assert not cost.forked and cost.once_s == 0.0


def test_a_set_up_that_opens_the_gpu_in_its_workers_starts_them_fresh_and_no_servers() -> None:
    # `import torch` leaves the server fork-safe, but its profiler warm-up opens the device
    # where the set-up uses one: on an H200 the plan forked (15.4 s) and the servers went
    # unused while 4 fresh workers took 56 s
    device = dataclasses.replace(TORCH, setup_device_runtimes=("cuda",))
    assert device.fork  # the other lenses still fork: their servers never open the device
    cost = torch_cost(device, Settings())
    per_worker_s = device.startup_s + TORCH_PROFILER_START_S + TORCH_DEVICE_PROFILER_START_S
    per_worker_s += profiled_s(device)
    assert cost.minimum_s == pytest.approx(2 * 2 * per_worker_s)
    assert not cost.forked and cost.once_s == 0.0
