"""The asm lens: disassembly of the hot functions, normalised and diffed."""

from perflab.budget.perf_costs import CALL_GRAPH_RECORDING, Reading
from perflab.lenses.asm.cost import asm_cost
from perflab.lenses.asm.metric import ASM as ASM
from perflab.lenses.asm.options import OPTIONS
from perflab.lenses.descriptor import (
    Explanation,
    LensDescriptor,
    Planning,
    Probe,
    ProbeFacts,
    SharedRecording,
)


def _probe(facts: ProbeFacts) -> Probe:
    objdump = facts.which("objdump") or facts.find_llvm("llvm-objdump")
    if objdump:
        return Probe(True, f"disassembles with {objdump}")
    return Probe(False, "no objdump", "sudo apt-get install binutils")


DESCRIPTOR = LensDescriptor(
    metric=ASM,
    summary="disassembly of the hot functions, diffed",
    lens="perflab.lenses.asm.measure:AsmLens",
    probe=_probe,
    render="perflab.lenses.asm.render:section",
    options=OPTIONS,
    # a statement's sampled instructions, read from the recording a profile makes too
    planning=Planning(
        cost=asm_cost,
        needs_quiet_cpu=False,
        shares_recording=SharedRecording(CALL_GRAPH_RECORDING, Reading.LEAVES),
    ),
    explanation=Explanation(
        claims_about_functions=True,
        reads_machine_code=True,
        code_facts="perflab.lenses.asm.code_facts:code_facts",
        same_code="perflab.lenses.asm.same_code:same_code",
        reads_placement="the asm lens reads the hot loops' addresses",
    ),
)
