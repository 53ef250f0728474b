"""The real thing on a GPU: the torch lens records the kernels a CUDA statement launches, and
the time lens waits for the device. Skipped with the reason where no GPU is seen (CI has none)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.gpu]

SETUP = "import torch; x = torch.ones(1, device='cuda'); y = torch.ones(1, device='cuda')"


def test_a_small_cuda_op_is_profiled_with_its_kernel_and_found_launch_bound(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [
            sys.executable, "-m", "perflab.cli.main", "run",
            "--stmt", "torch.add(x, y)", "--setup", SETUP,
            "--variant", "A", "--variant", "B env.PERFLAB_GPU_AA=1",
            "--metric", "time,torch", "--budget", "60",
            "--store", str(tmp_path / "store.db"), "--json", str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    document = json.loads(out.read_text())
    (torch_comparison,) = [c for c in document["comparisons"] if c["metric"] == "torch"]
    device = torch_comparison["baseline_device"]
    assert device["launches_per_iteration"] >= 1.0
    assert device["kernels"] and device["bound"] == "launch-bound"
    infos = [variant["info"] for variant in document["variants"]]
    assert all(info.get("device_synchronised") == "cuda" for info in infos)
    assert "initialization error" not in completed.stderr
