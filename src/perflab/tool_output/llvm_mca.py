"""What llvm-mca (LLVM's machine code analyser) writes, read: the summary of its default output
and the CPU models `-mcpu=help` lists. Pure; tool_drivers/llvm_mca.py runs it.

llvm-mca simulates a loop body for a number of iterations on a scheduling model of one CPU; its
"Total Cycles / Iterations" is the predicted steady-state cost of one iteration, assuming every
load hits L1 and every branch is predicted. It says what the code could do, not what it did: the
measured cost next to it says how far memory or front-end effects are from that ideal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_FIELD = re.compile(r"^(Iterations|Total Cycles|Total uOps|Block RThroughput):\s+([0-9.]+)", re.M)


@dataclass(frozen=True)
class LoopThroughput:
    """llvm-mca's static prediction for one iteration of a loop body."""

    cpu: str
    cycles_per_iteration: float
    uops_per_iteration: float
    block_reciprocal_throughput: float

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu,
            "cycles_per_iteration": self.cycles_per_iteration,
            "uops_per_iteration": self.uops_per_iteration,
            "block_rthroughput": self.block_reciprocal_throughput,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoopThroughput:
        return cls(
            str(data["cpu"]),
            float(data["cycles_per_iteration"]),
            float(data["uops_per_iteration"]),
            float(data["block_rthroughput"]),
        )


def parse_mca_summary(text: str, cpu: str) -> LoopThroughput | None:
    """The summary block at the top of llvm-mca's default output (None if it is not there)."""
    fields = {name: float(value) for name, value in _FIELD.findall(text)}
    iterations = fields.get("Iterations")
    if not iterations or "Total Cycles" not in fields:
        return None
    return LoopThroughput(
        cpu=cpu,
        cycles_per_iteration=fields["Total Cycles"] / iterations,
        uops_per_iteration=fields.get("Total uOps", 0.0) / iterations,
        block_reciprocal_throughput=fields.get("Block RThroughput", 0.0),
    )


def parse_mcpu_help(text: str) -> frozenset[str]:
    """CPU names from `llvm-mca -mcpu=help` (its "Available CPUs" block)."""
    names = set()
    in_cpus = False
    for line in text.splitlines():
        if line.startswith("Available CPUs"):
            in_cpus = True
            continue
        if in_cpus and line.startswith("Available features"):
            break
        match = re.match(r"^\s+([\w.-]+)\s+- Select the", line)
        if in_cpus and match:
            names.add(match.group(1))
    return frozenset(names)
