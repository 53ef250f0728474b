"""torch.profiler's key_averages tables as the torch lens stores them (CPU only and with a device),
and a stored run of two variants built from them."""

from __future__ import annotations

import json

from perflab.lenses.torch.analyse import (
    KIND_OPS,
    KIND_WARMUP_OPS,
    PACE_US,
    SELF_CPU_US,
    profile_values,
)
from perflab.lenses.torch.ops import OpStats, OpTable, parse_op_table
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Sample


def table(loops: int, *ops: tuple[str, int, float], capability: str = "AVX512") -> OpTable:
    """ops: (name, count, self µs); total time = self time (no child ops)."""
    return OpTable(
        loops=loops,
        wall_ns=loops * 1000,
        ops=tuple(OpStats(name, count, self_us, self_us) for name, count, self_us in ops),
        torch_version="2.13.0+cpu",
        cpu_capability=capability,
    )


DEVICE_KERNEL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"
)


def device_table(
    loops: int, *, host_us: float, kernel_us: float, kernel: str = DEVICE_KERNEL
) -> OpTable:
    """The worker's reply shape where the process had initialised CUDA: host-side ops (the op,
    its launch, the sample's two synchronisations) and what ran on the device."""
    return parse_op_table(
        {
            "loops": loops,
            "wall_ns": loops * 10_000,
            "device": "cuda",
            "ops": [
                {
                    "name": "aten::add",
                    "count": loops,
                    "self_cpu_time_total_us": host_us,
                    "cpu_time_total_us": host_us,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": "cudaLaunchKernel",
                    "count": loops,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": "cudaDeviceSynchronize",
                    "count": 2,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": kernel,
                    "count": loops,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": True,
                    "self_device_time_total_us": kernel_us,
                },
                {
                    "name": "Memcpy HtoD (Pageable -> Device)",
                    "count": 0,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": True,
                    "self_device_time_total_us": 0.0,
                },
            ],
        }
    )


def stored(
    variant: str, tables: list[OpTable], *, generations: int, warmup_table: OpTable | None = None
) -> tuple[list[Sample], list[Artifact]]:
    """What the lens stores: per generation a warm-up profile (block 0), then measured ones."""
    samples, artifacts = [], []
    for generation in range(generations):
        profiles = [(warmup_table or tables[0], True)] + [(t, False) for t in tables]
        for block, (profile, warmup) in enumerate(profiles):
            kind = KIND_WARMUP_OPS if warmup else KIND_OPS
            content = json.dumps(profile.to_json())
            artifacts.append(Artifact("b", variant, Metric.TORCH, kind, content, generation))
            for name, value in profile_values(profile):
                if name in (SELF_CPU_US, PACE_US):
                    value *= 1 + 0.01 * generation
                samples.append(
                    Sample(
                        benchmark="b",
                        variant=variant,
                        metric=Metric.TORCH,
                        name=name,
                        value=value,
                        loops=profile.loops,
                        generation=generation,
                        block=block,
                        warmup=warmup,
                    )
                )
    return samples, artifacts
