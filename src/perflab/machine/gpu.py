"""The machine's GPUs as `nvidia-smi` and the variants' torch see them (doctor's facts).

Parsing is pure; `gpu_checks` asks the real tools. perflab never initialises a device itself:
torch is asked in a process of its own, since CUDA initialised in a process that forks breaks
the children's first use of the device.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.records.checks import Check, Status

GPU_QUERY = ("--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader")
_CUDA_VERSION = re.compile(r"CUDA Version:\s*([0-9][0-9.]*)")
_TORCH_PROBE = (
    "import torch; print(torch.__version__); print(torch.version.cuda); "
    "print(torch.cuda.is_available()); print(torch.cuda.device_count())"
)


@dataclass(frozen=True)
class Gpu:
    """One GPU as nvidia-smi lists it."""

    index: int
    name: str
    driver_version: str
    memory: str  # as nvidia-smi says it, unit included ("81559 MiB")


def parse_gpu_query(text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader`;
    lines that do not have the four fields are skipped."""
    gpus = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 4 or not fields[0].isdigit():
            continue
        gpus.append(Gpu(int(fields[0]), fields[1], fields[2], fields[3]))
    return gpus


def cuda_version_of(nvidia_smi_text: str) -> str | None:
    """The CUDA version the driver supports, from plain `nvidia-smi`'s header."""
    match = _CUDA_VERSION.search(nvidia_smi_text)
    return match.group(1) if match else None


def gpu_checks(runner: ProcessRunner, nvidia_smi: str | None, torch_present: bool) -> list[Check]:
    """What doctor says of GPUs: none, or each GPU with its driver and CUDA version, and
    whether torch in perflab's own interpreter sees the device."""
    if nvidia_smi is None:
        return [
            Check(
                "GPU",
                Status.INFO,
                "no NVIDIA GPU (nvidia-smi is not on PATH): the torch lens profiles the CPU "
                "only; tests marked gpu are skipped",
            )
        ]
    query = runner.run(LaunchSpec(argv=(nvidia_smi, *GPU_QUERY)), timeout_s=30)
    gpus = parse_gpu_query(query.stdout) if query.ok else []
    if not gpus:
        detail = (query.stderr or query.stdout).strip().splitlines()
        return [
            Check(
                "GPU",
                Status.WARNING,
                "nvidia-smi found no GPU" + (f": {detail[0]}" if detail else ""),
                "check the driver: nvidia-smi should list the GPUs",
            )
        ]
    header = runner.run(LaunchSpec(argv=(nvidia_smi,)), timeout_s=30)
    cuda = cuda_version_of(header.stdout) if header.ok else None
    checks = [
        Check(
            f"GPU {gpu.index}",
            Status.OK,
            f"{gpu.name}, {gpu.memory}, driver {gpu.driver_version}"
            + (f", CUDA {cuda}" if cuda else ""),
        )
        for gpu in gpus
    ]
    checks.append(_torch_check(runner, torch_present))
    return checks


def _torch_check(runner: ProcessRunner, torch_present: bool) -> Check:
    if not torch_present:
        return Check(
            "torch on the GPU",
            Status.INFO,
            "perflab's python has no torch; each variant's own torch is what the lens uses",
        )
    probe = runner.run(LaunchSpec(argv=(sys.executable, "-c", _TORCH_PROBE)), timeout_s=120)
    lines = probe.stdout.split()
    if not probe.ok or len(lines) < 4:
        return Check(
            "torch on the GPU", Status.WARNING, "torch failed to start: " + probe.stderr[-200:]
        )
    version, cuda, available, count = lines[:4]
    if available != "True":
        return Check(
            "torch on the GPU",
            Status.WARNING,
            f"torch {version} does not see the GPU (built for CUDA {cuda})",
            "install a CUDA build of torch that matches the driver's CUDA version",
        )
    return Check(
        "torch on the GPU",
        Status.OK,
        f"torch {version} (CUDA {cuda}) sees {count} GPU(s): the torch lens records kernels, "
        "and samples of statements that use CUDA wait for the device",
    )
