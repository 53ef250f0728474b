"""What the bench scripts record next to every figure: the CPU, the load, the date, the commit.

    from machine_facts import machine, cpu_model, commit

The scripts are run as `python bench/NAME.py`, so this folder is on their import path (as for
`machine_load`). docs/benchmarks.md wants the CPU model, the load average, the date and the commit
beside each figure: `machine()` gives them in one dictionary, a script adds its own tools' versions.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    """The CPU as /proc/cpuinfo names it ("AMD EPYC ..."), else what the platform says."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def commit() -> str:
    """The checkout's short commit ("" outside a git checkout)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip()


def has_avx512() -> bool:
    """Whether the CPU has AVX-512 (avx512f): the hosts of one VM type differ, and figures
    differ with it (every figure says which)."""
    try:
        return " avx512f" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def machine(**extra: Any) -> dict[str, Any]:
    """One description for every script's report: `cpu`, `avx512`, `vcpus`, `kernel`,
    `python`, `date` (UTC), `commit`, `load_average` (1/5/15 min, now), and the script's own
    `extra` facts."""
    return {
        "cpu": cpu_model(),
        "avx512": has_avx512(),
        "vcpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "load_average": load_average(),
        **extra,
    }
