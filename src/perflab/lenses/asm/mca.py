"""Static throughput of a loop body with llvm-mca (LLVM's machine code analyser).

llvm-mca simulates the body for a number of iterations on a scheduling model of one CPU; its
"Total Cycles / Iterations" is the predicted steady-state cost of one iteration, assuming every
load hits L1 and every branch is predicted. It says what the code could do, not what it did: the
measured cost next to it says how far memory or front-end effects are from that ideal.
"""

from __future__ import annotations

import re

from perflab.lenses.asm.analyse import LoopThroughput
from perflab.proc import LaunchSpec, ProcessRunner, which

DEFAULT_MCPU = "sapphirerapids"
MCA_TIMEOUT_S = 30.0
_FIELD = re.compile(r"^(Iterations|Total Cycles|Total uOps|Block RThroughput):\s+([0-9.]+)", re.M)


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


class McaPredictor:
    """Runs llvm-mca through the process seam; `available` is False when the tool is missing."""

    def __init__(
        self, runner: ProcessRunner, cpu: str = DEFAULT_MCPU, tool: str | None = None
    ) -> None:
        self.runner = runner
        self.cpu = cpu
        self.tool = tool or which("llvm-mca") or which("llvm-mca-14")

    @property
    def available(self) -> bool:
        return self.tool is not None

    def __call__(self, assembly: str) -> LoopThroughput | None:
        if self.tool is None:
            return None
        done = self.runner.run(
            LaunchSpec(argv=(self.tool, f"-mcpu={self.cpu}", "-iterations=100", "-")),
            stdin_text=assembly,
            timeout_s=MCA_TIMEOUT_S,
        )
        # an instruction llvm-mc cannot assemble (rare capstone spellings) fails this one loop only
        return parse_mca_summary(done.stdout, self.cpu) if done.ok else None
